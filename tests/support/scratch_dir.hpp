#pragma once
// The one scratch directory for tests: a fresh directory under $TMPDIR (or /tmp), made with
// mkdtemp so that tests running at the same time (ctest -j, gtest shards, two worktrees) never
// share one, and removed with everything in it when the object goes out of scope.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>

namespace genrepro::test {

class ScratchDir {
 public:
  // `tag` names the directory (genrepro-<tag>-XXXXXX) so that a leftover one says whose it is.
  explicit ScratchDir(const std::string& tag = "test") {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/genrepro-" + tag + "-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // The path of `name` inside the directory (nothing is created).
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

  // Writes `bytes` to `name` (parent directories made), replacing any old content; returns its path.
  std::string write(const std::string& name, const std::string& bytes) const;

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline std::string ScratchDir::write(const std::string& name, const std::string& bytes) const {
  const std::filesystem::path p = path_ / name;
  write_bytes(p, bytes);
  return p.string();
}

}  // namespace genrepro::test
