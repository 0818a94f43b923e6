// One function per kind of flag value (cli/flag_kinds.hpp, cli/output_paths.hpp): the same bounds
// and the same words for every verb that takes the value.
#include "cli/flag_kinds.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

using test::ScratchDir;

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(FlagKinds, ThreadsFromOneTo256) {
  EXPECT_EQ(checked_threads("--threads", 1), 1);
  EXPECT_EQ(checked_threads("--threads", 256), 256);
  EXPECT_EQ(usage_error([] { checked_threads("--threads", 100000); }), "--threads 100000: allowed: a whole number from 1 to 256");
  EXPECT_EQ(usage_error([] { checked_threads("--threads", 0); }), "--threads 0: allowed: a whole number from 1 to 256");
  EXPECT_EQ(usage_error([] { checked_threads("--threads", -4); }), "--threads -4: allowed: a whole number from 1 to 256");
}

TEST(FlagKinds, TolerancesAreFiniteAndNotNegative) {
  EXPECT_EQ(checked_tolerance("--prob-tolerance", 0), 0);
  EXPECT_EQ(checked_tolerance("--prob-tolerance", 1e-4), 1e-4);
  EXPECT_EQ(usage_error([] { checked_tolerance("--prob-tolerance", -1); }), "--prob-tolerance -1: must be a finite number >= 0");
  EXPECT_EQ(usage_error([] { checked_tolerance("--logprob-tolerance", std::nan("")); }),
            "--logprob-tolerance nan: must be a finite number >= 0");
  EXPECT_EQ(usage_error([] { checked_tolerance("--prob-tolerance", HUGE_VAL); }), "--prob-tolerance inf: must be a finite number >= 0");
  EXPECT_EQ(usage_error([] { checked_tolerance("--prob-tolerance", -1e-300); }),
            "--prob-tolerance -1e-300: must be a finite number >= 0");
}

TEST(FlagKinds, ShardsAreIOfN) {
  EXPECT_EQ(checked_shard("2/4").index, 2);
  EXPECT_NE(usage_error([] { checked_shard("5/4"); }).find("--shard 5/4: expected I/N"), std::string::npos);
  EXPECT_NE(usage_error([] { checked_shard(""); }).find("--shard : expected I/N"), std::string::npos);
}

TEST(OutputPaths, AFileOutputIsNotEmptyADirectoryADeviceOrAnInput) {
  ScratchDir dir("flags");
  const std::string input = dir.write("exp.json", "{}");
  EXPECT_EQ(usage_error([&] { check_output_file("--out", "", {input}); }), "--out is empty; give a file path");
  EXPECT_EQ(usage_error([&] { check_output_file("--out", dir.str(), {input}); }),
            "--out " + dir.str() + ": is a directory; give a file path such as " + dir.str() + "/out.json");
  EXPECT_EQ(usage_error([&] { check_output_file("--out", "/dev/null", {input}); }),
            "--out /dev/null: is not a regular file (a device, FIFO or socket); give a file path");
  EXPECT_EQ(usage_error([&] { check_output_file("--out", dir / "exp.json/sub/e.json", {input}); }),
            "--out " + (dir / "exp.json/sub/e.json") + ": " + input + " is not a directory; give a path inside a directory");
  EXPECT_EQ(usage_error([&] { check_output_file("--out", dir / "made/by/the/writer.json", {input}); }), "(no error)");
  // The same file under another spelling, and through a hard link: device and inode, not spelling.
  const std::string spelled = dir.str() + "/./exp.json";
  EXPECT_EQ(usage_error([&] { check_output_file("--out", spelled, {input}); }),
            "--out " + spelled + ": is the input " + input + "; write the output to another file");
  ASSERT_EQ(::link(input.c_str(), (dir / "hard.json").c_str()), 0);
  EXPECT_NE(usage_error([&] { check_output_file("--out", dir / "hard.json", {input}); }).find("is the input"), std::string::npos);
  EXPECT_EQ(usage_error([&] { check_output_file("--out", dir / "new.json", {input}); }), "(no error)");
}

TEST(OutputPaths, ADirectoryOutputIsNotEmptyNorAFile) {
  ScratchDir dir("flags");
  const std::string file = dir.write("e.json", "{}");
  EXPECT_EQ(usage_error([&] { check_output_directory("--into", ""); }), "--into is empty; give a directory path");
  EXPECT_EQ(usage_error([&] { check_output_directory("--out", file); }),
            "--out " + file + " exists and is not a directory; give a directory path");
  EXPECT_EQ(usage_error([&] { check_output_directory("--out", dir / "new"); }), "(no error)");
  EXPECT_EQ(usage_error([&] { check_output_directory("--out", dir.str()); }), "(no error)");
}

}  // namespace
}  // namespace genrepro::cli
