#include "util/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "util/errors.hpp"

namespace genrepro {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& step, int err) {
  throw Error(path + ": cannot write: " + step + ": " + std::strerror(err) +
              "; check that the directory exists, is writable and has space");
}

// Removes the temporary file unless the rename succeeded.
class TempFile {
 public:
  TempFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  int close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }
  void committed() { committed_ = true; }

 private:
  std::string path_;
  int fd_;
  bool committed_ = false;
};

void write_all(const TempFile& tmp, const std::string& target, const std::string& content) {
  const char* p = content.data();
  size_t left = content.size();
  while (left > 0) {
    const ssize_t n = ::write(tmp.fd(), p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(target, "writing " + tmp.path(), errno);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target = fs::absolute(path);
  const fs::path dir = target.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(path, "creating directory " + dir.string(), ec.value());
  if (fs::is_directory(target, ec)) fail(path, "the path is a directory", EISDIR);

  // mkstemp picks a fresh name in the target's directory; the leading dot keeps it out of globs.
  std::string pattern = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail(path, "creating a temporary file in " + dir.string(), errno);
  TempFile tmp(name.data(), fd);
  // mkstemp creates 0600; evidence is meant to be read by others. (umask() cannot be read
  // without changing it, which would race with other threads.)
  constexpr mode_t kSharedFileMode = 0644;
  ::fchmod(tmp.fd(), kSharedFileMode);

  write_all(tmp, path, content);
  if (::fsync(tmp.fd()) != 0) fail(path, "flushing " + tmp.path(), errno);
  if (tmp.close() != 0) fail(path, "closing " + tmp.path(), errno);
  if (::rename(tmp.path().c_str(), target.c_str()) != 0) fail(path, "renaming " + tmp.path() + " over it", errno);
  tmp.committed();
  // Make the rename itself durable: fsync the directory entry.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace genrepro
