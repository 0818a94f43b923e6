// Atomic writes: the new content appears whole, and a write that fails half-way (here: the
// file-size limit, RLIMIT_FSIZE, cuts it off) leaves the existing file byte-identical and no
// temporary file behind.
#include "util/atomic_file.hpp"

#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class AtomicFile : public ::testing::Test {
 protected:
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }
  const test::ScratchDir scratch_{"atomic"};
  const fs::path dir_ = scratch_.path();
};

TEST_F(AtomicFile, WritesAndReplacesAndCreatesParents) {
  const fs::path target = dir_ / "sub" / "evidence.json";
  write_file_atomically(target.string(), "first");
  EXPECT_EQ(slurp(target), "first");
  write_file_atomically(target.string(), "second, longer content");
  EXPECT_EQ(slurp(target), "second, longer content");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "sub"), fs::directory_iterator()), 1);
}

TEST_F(AtomicFile, FailureHalfWayLeavesTheExistingFileUntouched) {
  const fs::path target = dir_ / "evidence.json";
  write_file_atomically(target.string(), "old evidence");
  // Cap the size any file may grow to; writing past it fails with EFBIG (SIGXFSZ ignored).
  constexpr rlim_t kCapBytes = 4096;
  const std::string big(4 * kCapBytes, 'x');
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit capped = old_limit;
  capped.rlim_cur = kCapBytes;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &capped), 0);
  std::string message;
  try {
    write_file_atomically(target.string(), big);
  } catch (const Error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(message.find(target.string() + ": cannot write: writing "), std::string::npos) << message;
  EXPECT_NE(message.find("File too large"), std::string::npos) << message;
  EXPECT_EQ(slurp(target), "old evidence");
  EXPECT_EQ(entries(), 1u) << "the temporary file must be removed";
}

TEST_F(AtomicFile, ADirectoryIsNeverReplaced) {
  const fs::path target = dir_ / "out";
  fs::create_directories(target / "keep");
  try {
    write_file_atomically(target.string(), "x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), target.string() + ": cannot write: the path is a directory: Is a directory; "
                                                        "check that the directory exists, is writable and has space");
  }
  EXPECT_TRUE(fs::is_directory(target / "keep"));
}

}  // namespace
}  // namespace genrepro
