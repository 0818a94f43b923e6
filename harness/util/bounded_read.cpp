#include "util/bounded_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <istream>
#include <vector>

namespace genrepro {

namespace {

// Read in pieces of this size: small enough to notice the limit (and a NUL) early, large enough
// to read a big file in few calls.
constexpr std::size_t kChunkBytes = std::size_t(1) << 16;

// Closes the descriptor it opened (standard input is left open).
class Input {
 public:
  explicit Input(const std::string& path)
      : fd_(path == kStdinPath ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC)), owned_(path != kStdinPath) {}
  ~Input() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
  bool owned_;
};

std::string too_large(uint64_t max_bytes) {
  return "holds more than the " + std::to_string(max_bytes) + " bytes allowed for this kind of file; is this the right file?";
}

// A long text that does not start like a JSON object: the problem, or empty.
std::string not_an_object(const std::string& text, Expect expect) {
  if (expect != Expect::json_object || text.size() < kSniffBytes) return {};
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] == '{') return {};
  char shown[8];
  std::snprintf(shown, sizeof shown, "0x%02X", static_cast<unsigned char>(text[first]));
  return "byte " + std::to_string(first) + " is " + shown + ", not the '{' a JSON object starts with (stopped after " +
         std::to_string(text.size()) + " bytes)";
}

// The rules every chunk passes, whatever it was read from: no NUL byte (for text), no more than the limit,
// and the start a JSON object needs. Returns the problem, or empty after appending the chunk.
std::string append_checked(std::string& text, const char* chunk, std::size_t n, uint64_t max_bytes, Expect expect) {
  if (const void* nul = expect == Expect::bytes ? nullptr : std::memchr(chunk, '\0', n)) {
    const std::size_t offset = text.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - chunk);
    return "byte " + std::to_string(offset) + " is NUL: binary data, not a text file";
  }
  if (text.size() + static_cast<uint64_t>(n) > max_bytes) return too_large(max_bytes);
  text.append(chunk, n);
  return not_an_object(text, expect);
}

}  // namespace

BoundedRead read_bounded(const std::string& path, uint64_t max_bytes, Expect expect) {
  BoundedRead out;
  if (path.empty()) {
    out.problem = "the path is empty; give a file path (or - for standard input)";
    return out;
  }
  const Input in(path);
  if (in.fd() < 0) {
    out.problem = errno == ENOENT ? "no such file" : std::string("cannot open: ") + std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(in.fd(), &st) == 0 && S_ISDIR(st.st_mode)) {
    out.problem = "is a directory, not a file";
    return out;
  }
  std::string text;
  std::vector<char> chunk(kChunkBytes);
  while (true) {
    const ssize_t n = ::read(in.fd(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.problem = std::string("read error: ") + std::strerror(errno);
      return out;
    }
    if (n == 0) break;
    out.problem = append_checked(text, chunk.data(), static_cast<std::size_t>(n), max_bytes, expect);
    if (!out.ok()) return out;
  }
  out.text = std::move(text);
  return out;
}

BoundedRead read_bounded(std::istream& in, uint64_t max_bytes, Expect expect) {
  BoundedRead out;
  std::string text;
  std::vector<char> chunk(kChunkBytes);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto n = static_cast<std::size_t>(in.gcount());
    if (n == 0) break;
    out.problem = append_checked(text, chunk.data(), n, max_bytes, expect);
    if (!out.ok()) return out;
  }
  if (in.bad()) {
    out.problem = "read error";
    return out;
  }
  out.text = std::move(text);
  return out;
}

}  // namespace genrepro
