#include "evidence/checkpoint.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "evidence/value_text.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/sha256.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;

// Every line is {"sha256":"<64 hex>","line":<body>}, the digest that of the body's exact bytes, so
// a line edited by hand or damaged on disk is found even when it is still valid JSON.
constexpr std::string_view kFramePrefix = "{\"sha256\":\"";
constexpr std::string_view kFrameMiddle = "\",\"line\":";
constexpr std::size_t kDigestHexDigits = 64;
constexpr std::size_t kFrameHead = kFramePrefix.size() + kDigestHexDigits + kFrameMiddle.size();
constexpr const char* kCheckpointSchemaV1 = "genrepro.checkpoint/1";

std::string framed_line(const std::string& body) {
  return std::string(kFramePrefix) + sha256_hex(body) + std::string(kFrameMiddle) + body + "}\n";
}

// A first line as genrepro.checkpoint/1 wrote it: the header object itself, without a frame.
bool is_unframed_first_line(std::string_view line) {
  return line.substr(0, kFramePrefix.size()) != kFramePrefix && line.find(kCheckpointSchemaV1) != std::string_view::npos;
}

// The body of one complete line, checked against its digest. A line that is not framed is cut
// short only when it is the last and no JSON (a kill mid-write: empty, the caller drops it);
// anywhere else, as whole JSON of another shape, and with a digest that does not match, the
// checkpoint is damaged or is no checkpoint.
std::optional<std::string_view> unframe(std::string_view line, const std::string& path, int line_number, bool last) {
  const bool framed = line.size() > kFrameHead && line.substr(0, kFramePrefix.size()) == kFramePrefix &&
                      line.substr(kFramePrefix.size() + kDigestHexDigits, kFrameMiddle.size()) == kFrameMiddle && line.back() == '}';
  const std::string where = path + ": line " + std::to_string(line_number) + ": ";
  if (!framed) {
    if (last && !parse_ordered_json_text(line).ok()) return std::nullopt;
    throw EvidenceError(where + "expected {\"sha256\": \"<64 hex>\", \"line\": {...}}; the checkpoint is damaged: delete it to start the runs over");
  }
  const std::string_view digest = line.substr(kFramePrefix.size(), kDigestHexDigits);
  const std::string_view body = line.substr(kFrameHead, line.size() - kFrameHead - 1);
  const std::string actual = sha256_hex(body);
  if (actual != digest)
    throw EvidenceError(where + "its bytes hash to sha256 " + actual.substr(0, 16) + "..., the line records " +
                        std::string(digest.substr(0, 16)) +
                        "...; the line was edited or damaged: delete the checkpoint to start the runs over");
  return body;
}

[[noreturn]] void io_failure(const std::string& path, const std::string& step, int err) {
  throw Error(path + ": cannot " + step + ": " + std::strerror(err) +
              "; check that the directory exists, is writable and has space");
}

// Which part of the key a difference is in, said as people would: "a different model".
std::string part_name(const std::string& key) {
  if (key == "genrepro") return "a different build of genrepro";
  if (key == "environment") return "a different environment";
  if (key == "model") return "a different model";
  if (key == "experiments") return "different experiments";
  if (key == "shard") return "a different --shard";
  if (key == "numerics") return "different numerics";
  return "a different " + key;
}

// Where two JSON values first differ: the path as people read it ("model.files.x.sha256") and
// as a JSON pointer (keys may hold dots). Empty `shown` when they are equal.
struct Difference {
  std::string shown;
  std::string pointer;
};

std::string pointer_escaped(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

Difference first_difference(const OrderedJson& a, const OrderedJson& b, const Difference& at) {
  if (a == b) return {};
  const auto child = [&](const std::string& key) {
    return Difference{at.shown.empty() ? key : at.shown + "." + key, at.pointer + "/" + pointer_escaped(key)};
  };
  if (a.type() != b.type() || (!a.is_object() && !a.is_array()))
    return at.shown.empty() ? Difference{"(the whole key)", ""} : at;
  if (a.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return child(k);
      const Difference d = first_difference(v, b.at(k), child(k));
      if (!d.shown.empty()) return d;
    }
    for (const auto& [k, v] : b.items())
      if (!a.contains(k)) return child(k);
    return {};
  }
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const Difference d = first_difference(a[i], b[i], Difference{at.shown + "[" + std::to_string(i) + "]",
                                                                 at.pointer + "/" + std::to_string(i)});
    if (!d.shown.empty()) return d;
  }
  return Difference{at.shown + " (length)", at.pointer};
}

std::string value_at(const OrderedJson& j, const std::string& pointer) {
  try {
    return show_value(j.at(OrderedJson::json_pointer(pointer)));
  } catch (const std::exception&) {
    return "absent";
  }
}

}  // namespace

std::string checkpoint_path_for(const std::string& out) { return out + ".checkpoint"; }

OrderedJson checkpoint_key(const Evidence& header, const std::string& shard) {
  Evidence copy = header;
  copy.runs.clear();
  OrderedJson j = strip_volatile(evidence_to_json(copy));
  OrderedJson key;
  key["genrepro"] = j["genrepro"];
  key["environment"] = j["environment"];
  // Where the files are does not change a bit; what they hold does.
  j["model"].erase("path");
  key["model"] = j["model"];
  for (OrderedJson& x : j["experiments"]) x.erase("path");
  key["experiments"] = j["experiments"];
  key["shard"] = shard;
  key["numerics"] = j.contains("numerics") ? j["numerics"] : OrderedJson(nullptr);
  return key;
}

std::string checkpoint_key_mismatch(const OrderedJson& found, const OrderedJson& written) {
  // Compared as both were written and read back, so 1 and 1u (or 0.1 as text) are one value.
  const OrderedJson expected = OrderedJson::parse(written.dump());
  const Difference d = first_difference(found, expected, Difference{});
  if (d.shown.empty()) return "";
  const std::string top = d.shown.substr(0, d.shown.find_first_of(".[ "));
  return part_name(top) + ": " + d.shown + " is " + value_at(found, d.pointer) + " in the checkpoint, " +
         value_at(expected, d.pointer) + " now";
}

CheckpointFile CheckpointFile::open(const std::string& path) {
  const fs::path target = fs::absolute(path);
  std::error_code ec;
  const bool existed = fs::exists(target, ec);
  fs::create_directories(target.parent_path(), ec);
  if (ec) io_failure(path, "create directory " + target.parent_path().string(), ec.value());
  // The lock belongs to the file now at `path`: a finishing run may delete the file between our
  // open and our lock, so the lock is only ours once the path still names the locked inode.
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(target.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      if (errno == ELOOP)
        throw Error(path + ": is a symbolic link; genrepro writes its checkpoint only as a plain file next to --out; remove the link");
      io_failure(path, "create the checkpoint", errno);
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw Error(path + ": another genrepro process is writing this checkpoint (the same --out); wait for it to "
                           "finish, or give this run another --out");
      io_failure(path, "lock the checkpoint", err);
    }
    struct stat held {}, named {};
    if (::fstat(fd, &held) == 0 && ::stat(target.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      if (!S_ISREG(held.st_mode)) {
        ::close(fd);
        throw Error(path + ": is not a regular file; remove it (genrepro keeps its checkpoint there)");
      }
      return CheckpointFile(path, fd, existed);
    }
    ::close(fd);
  }
  throw Error(path + ": keeps being replaced by another process; give this run another --out");
}

CheckpointFile::CheckpointFile(CheckpointFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(other.fd_),
      existed_(other.existed_),
      pending_first_line_(std::move(other.pending_first_line_)) {
  other.fd_ = -1;
}

CheckpointFile::~CheckpointFile() {
  if (fd_ < 0) return;
  // Opening created the file; one that is still empty (the run never started) is not left behind.
  struct stat held {}, named {};
  if (::fstat(fd_, &held) == 0 && held.st_size == 0 && ::stat(path_.c_str(), &named) == 0 &&
      held.st_ino == named.st_ino && held.st_dev == named.st_dev)
    ::unlink(path_.c_str());
  ::close(fd_);  // closing the descriptor ends the lock
}

CheckpointContents CheckpointFile::read() const {
  CheckpointContents c;
  BoundedRead r = read_bounded(path_, kMaxEvidenceBytes, Expect::text);
  if (!r.ok()) throw EvidenceError(path_ + ": " + r.problem + "; delete it to start the runs over");
  const std::string& text = r.text;
  size_t line_start = 0;
  int line_number = 0;
  while (line_start < text.size()) {
    const size_t end = text.find('\n', line_start);
    ++line_number;
    if (end == std::string::npos) {  // no newline: a write cut short by a kill
      c.dropped_partial_line = true;
      break;
    }
    const std::string_view framed(text.data() + line_start, end - line_start);
    const bool last = end + 1 >= text.size();
    if (line_number == 1 && is_unframed_first_line(framed))
      throw EvidenceError(path_ + ": line 1: a checkpoint of an older genrepro (" + std::string(kCheckpointSchemaV1) +
                          ", no line digests); delete it to start the runs over");
    const std::optional<std::string_view> line = unframe(framed, path_, line_number, last);
    if (!line) {
      c.dropped_partial_line = true;
      break;
    }
    const ParsedJson<OrderedJson> parsed = parse_ordered_json_text(*line);
    if (!parsed.ok() || !parsed.value.is_object()) {
      // Only the last line can be cut short; damage anywhere else is not ours to repair.
      if (last && !parsed.ok()) {
        c.dropped_partial_line = true;
        break;
      }
      throw EvidenceError(path_ + ": line " + std::to_string(line_number) + ": " +
                          (parsed.ok() ? std::string("expected a JSON object") : parsed.problem) +
                          "; the checkpoint is damaged: delete it to start the runs over");
    }
    if (line_number == 1) {
      if (parsed.value.value("schema", OrderedJson()) != kCheckpointSchema || !parsed.value.contains("key") ||
          !parsed.value["key"].is_object())
        throw EvidenceError(path_ + ": line 1: expected {\"schema\": \"" + kCheckpointSchema +
                            "\", \"key\": {...}}; this is not a genrepro checkpoint: delete it or give another --out");
      c.key = parsed.value["key"];
      c.empty = false;
    } else {
      c.runs.push_back(parsed.value);
    }
    line_start = end + 1;
    c.complete_bytes = line_start;
  }
  c.sha256 = sha256_hex(std::string_view(text.data(), c.complete_bytes));
  return c;
}

void CheckpointFile::truncate_to(uint64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) io_failure(path_, "cut the checkpoint back", errno);
  if (::lseek(fd_, 0, SEEK_END) < 0) io_failure(path_, "seek in the checkpoint", errno);
}

void CheckpointFile::write_line(const std::string& line) {
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  if (before < 0) io_failure(path_, "seek in the checkpoint", errno);
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      if (::ftruncate(fd_, before) == 0) ::lseek(fd_, before, SEEK_SET);  // keep the file whole
      io_failure(path_, "append to the checkpoint", err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) {
    const int err = errno;
    if (::ftruncate(fd_, before) == 0) ::lseek(fd_, before, SEEK_SET);
    io_failure(path_, "flush the checkpoint to disk", err);
  }
}

void CheckpointFile::start(const OrderedJson& key) {
  truncate_to(0);
  pending_first_line_ = framed_line(OrderedJson{{"schema", kCheckpointSchema}, {"key", key}}.dump());
}

void CheckpointFile::append(const OrderedJson& run) {
  write_line(pending_first_line_ + framed_line(run.dump()));
  pending_first_line_.clear();
}

void CheckpointFile::remove() {
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT) io_failure(path_, "delete the checkpoint", errno);
}

std::vector<RunRecord> checkpoint_runs(const CheckpointContents& contents, const Evidence& header,
                                       const std::string& path) {
  Evidence base = header;
  base.runs.clear();
  OrderedJson doc = evidence_to_json(base);
  doc["runs"] = OrderedJson::array();
  for (const OrderedJson& run : contents.runs) doc["runs"].push_back(run);
  try {
    return evidence_from_json(doc, path).runs;
  } catch (const EvidenceError& e) {
    throw EvidenceError(std::string(e.what()) + " (runs[i] is line i+2 of the checkpoint; delete it to start the runs over)");
  }
}

}  // namespace genrepro
