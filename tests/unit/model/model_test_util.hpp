#pragma once
// Helpers shared by the model-file tests: a scratch directory removed at the end of each test,
// raw file writing, and assertions on error messages.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace genrepro::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/genrepro-test-XXXXXX";
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Sets (or unsets, with nullopt) an environment variable for the lifetime of the guard.
class EnvGuard {
 public:
  EnvGuard(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace genrepro::test

// Runs `stmt`, expects it to throw `ExType`, and checks that the message contains `needle` and is
// one line. On failure prints the message actually thrown.
#define EXPECT_THROW_MSG(stmt, ExType, needle)                                                 \
  do {                                                                                        \
    bool genrepro_thrown_ = false;                                                            \
    try {                                                                                     \
      stmt;                                                                                   \
    } catch (const ExType& genrepro_e_) {                                                     \
      genrepro_thrown_ = true;                                                                \
      const std::string genrepro_msg_ = genrepro_e_.what();                                   \
      EXPECT_NE(genrepro_msg_.find(needle), std::string::npos)                                \
          << "message: " << genrepro_msg_ << "\nexpected to contain: " << (needle);           \
      EXPECT_EQ(genrepro_msg_.find('\n'), std::string::npos) << "multi-line: " << genrepro_msg_; \
    }                                                                                         \
    EXPECT_TRUE(genrepro_thrown_) << #stmt " did not throw " #ExType;                         \
  } while (0)
