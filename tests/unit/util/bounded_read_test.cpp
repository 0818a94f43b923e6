// The one bounded reader: a regular file, a pipe, a FIFO, standard input and /dev/zero all read
// alike, never past the limit (whatever size is reported), never a NUL byte; each problem one line.
#include "util/bounded_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"

namespace genrepro {
namespace {

using test::ScratchDir;

TEST(BoundedRead, ReadsAFileUpToTheLimitAndNotAByteMore) {
  ScratchDir dir("bounded");
  const std::string path = dir.write("x.json", std::string(100, 'x'));
  const BoundedRead ok = read_bounded(path, 100);
  ASSERT_TRUE(ok.ok()) << ok.problem;
  EXPECT_EQ(ok.text, std::string(100, 'x'));
  const BoundedRead over = read_bounded(path, 99);
  EXPECT_EQ(over.problem, "holds more than the 99 bytes allowed for this kind of file; is this the right file?");
  EXPECT_TRUE(over.text.empty());
}

TEST(BoundedRead, MissingDirectoryAndEmptyPathsAreNamed) {
  ScratchDir dir("bounded");
  EXPECT_EQ(read_bounded(dir / "nope", 10).problem, "no such file");
  EXPECT_EQ(read_bounded(dir.str(), 10).problem, "is a directory, not a file");
  EXPECT_EQ(read_bounded("", 10).problem, "the path is empty; give a file path (or - for standard input)");
}

// /dev/zero reports no size and never ends; it holds NULs, which no text file has: refused at
// once, whatever the limit (a read up to the limit would never end: ctest's TIMEOUT would say so).
TEST(BoundedRead, DevZeroEndsAtTheFirstByte) {
  const BoundedRead r = read_bounded("/dev/zero", uint64_t(1) << 40);
  EXPECT_EQ(r.problem, "byte 0 is NUL: binary data, not a text file");
}

// An endless pipe of text (what `yes |` gives) ends at the limit, read while it streams.
TEST(BoundedRead, AnEndlessPipeEndsAtTheLimit) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::atomic<bool> stop{false};
  std::thread writer([w = fds[1], &stop] {
    const std::string line(4096, 'y');
    while (!stop && ::write(w, line.data(), line.size()) > 0) {
    }
    ::close(w);
  });
  const std::string path = "/dev/fd/" + std::to_string(fds[0]);
  const BoundedRead r = read_bounded(path, 1 << 20);
  EXPECT_EQ(r.problem, "holds more than the 1048576 bytes allowed for this kind of file; is this the right file?");
  // Drain until the writer sees `stop` and closes (closing the read end first would raise SIGPIPE).
  stop = true;
  char sink[4096];
  while (::read(fds[0], sink, sizeof sink) > 0) {
  }
  writer.join();
  ::close(fds[0]);
}

// A FIFO (what `<(...)` and mkfifo give) reads like a file: no size, one pass.
TEST(BoundedRead, AFifoReadsLikeAFile) {
  ScratchDir dir("bounded");
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&fifo] {
    const int w = ::open(fifo.c_str(), O_WRONLY);
    const std::string text = "{\"name\": \"x\"}\n";
    (void)!::write(w, text.data(), text.size());
    ::close(w);
  });
  const BoundedRead r = read_bounded(fifo, 100);
  writer.join();
  ASSERT_TRUE(r.ok()) << r.problem;
  EXPECT_EQ(r.text, "{\"name\": \"x\"}\n");
}

// "-" is standard input (file descriptor 0), read by the same rules.
TEST(BoundedRead, DashIsStandardInput) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = "[1, 2, 3]\n";
  ASSERT_EQ(::write(fds[1], text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fds[1]);
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(fds[0], STDIN_FILENO);
  ::close(fds[0]);
  const BoundedRead r = read_bounded(kStdinPath, 100);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  ASSERT_TRUE(r.ok()) << r.problem;
  EXPECT_EQ(r.text, text);
}

TEST(BoundedRead, AStreamFollowsTheSameRules) {
  std::istringstream fine("abc");
  EXPECT_EQ(read_bounded(fine, 3).text, "abc");
  std::istringstream big("abcd");
  EXPECT_EQ(read_bounded(big, 3).problem, "holds more than the 3 bytes allowed for this kind of file; is this the right file?");
  std::istringstream binary(std::string("ab\0c", 4));
  EXPECT_EQ(read_bounded(binary, 10).problem, "byte 2 is NUL: binary data, not a text file");
}

// A JSON reader stops a long input that cannot be a JSON object after 64 KiB, not at the limit;
// a short one is left to the parser (which names line and column); an object reads whole.
TEST(BoundedRead, AJsonReaderStopsALongNonObjectEarly) {
  std::istringstream yes(std::string(1 << 20, 'y'));
  EXPECT_EQ(read_bounded(yes, 1 << 30, Expect::json_object).problem,
            "byte 0 is 0x79, not the '{' a JSON object starts with (stopped after 65536 bytes)");
  std::istringstream shortish("yy");
  EXPECT_TRUE(read_bounded(shortish, 100, Expect::json_object).ok());
  std::istringstream object("  {" + std::string(1 << 20, ' ') + "}");
  EXPECT_TRUE(read_bounded(object, 1 << 30, Expect::json_object).ok());
  std::istringstream as_text(std::string(1 << 20, 'y'));
  EXPECT_TRUE(read_bounded(as_text, 1 << 30).ok());
}

}  // namespace
}  // namespace genrepro
