// Untrusted JSON text: the bounded file read (whatever size the file system reports), the
// pre-scan (UTF-8 by the same rule as util/utf8.hpp, nesting depth), duplicate keys, and the
// order-keeping parse evidence is read with.
#include "util/json_text.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/utf8.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TextFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::path(::testing::TempDir()) / ("genrepro_json_text_" + std::to_string(::getpid()) + ".json");
  }
  void TearDown() override { fs::remove(path_); }
  fs::path path_;
};

TEST_F(TextFile, ReadsAFileUpToTheLimitAndNotAByteMore) {
  std::ofstream(path_, std::ios::binary) << std::string(100, 'x');
  std::string content, problem;
  ASSERT_TRUE(read_text_file(path_.string(), content, problem, 100)) << problem;
  EXPECT_EQ(content, std::string(100, 'x'));
  content = "untouched";
  EXPECT_FALSE(read_text_file(path_.string(), content, problem, 99));
  EXPECT_EQ(problem, "file is 100 bytes, more than the 99 bytes allowed; is this the right file?");
  EXPECT_EQ(content, "untouched");
}

// /dev/zero reports no size and never ends: only a bound kept while reading stops it.
TEST_F(TextFile, AFileWithoutAReportedSizeIsBoundedWhileReading) {
  std::string content, problem;
  EXPECT_FALSE(read_text_file("/dev/zero", content, problem, 3 << 20));
  EXPECT_EQ(problem, "file holds more than the 3145728 bytes allowed; is this the right file?");
  EXPECT_TRUE(content.empty());
}

TEST_F(TextFile, MissingFilesAndDirectoriesAreNamed) {
  std::string content, problem;
  EXPECT_FALSE(read_text_file((path_.string() + ".nope"), content, problem, 10));
  EXPECT_EQ(problem, "no such file");
  EXPECT_FALSE(read_text_file(fs::path(path_).parent_path().string(), content, problem, 10));
  EXPECT_EQ(problem, "is a directory, not a file");
}

// The pre-scan refuses exactly what util/utf8.hpp calls ill-formed (one rule, one place).
TEST(JsonText, InvalidUtf8IsRefusedByTheUtf8Rule) {
  const std::string cases[] = {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",
                               "\x80", "\xE2\x82", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF"};
  for (const std::string& bytes : cases) {
    const std::string text = "[\"" + bytes + "\"]";
    const bool valid = find_invalid_utf8(bytes) == std::string::npos;
    const JsonParseOutcome parsed = parse_json_text(text);
    EXPECT_EQ(parsed.ok(), valid) << parsed.problem;
    if (!valid) EXPECT_THAT(parsed.problem, HasSubstr("line 1, column 3: invalid UTF-8 (byte 0x"));
  }
}

TEST(JsonText, NestingDuplicateKeysAndSyntaxAreOneLineProblems) {
  EXPECT_EQ(parse_json_text(std::string(5, '[') + std::string(5, ']'), 4).problem,
            "line 1, column 5: JSON nested deeper than 4 levels; this file cannot be an experiment or evidence file");
  EXPECT_TRUE(parse_json_text("[\"[[[[[[\"]", 2).ok()) << "brackets inside strings do not nest";
  EXPECT_EQ(parse_json_text("{\"a\": {\"b\": 1, \"b\": 2}}").problem, "a.b: key given twice; an object may name each key once");
  EXPECT_THAT(parse_json_text("{\"a\": }").problem, HasSubstr("invalid JSON: parse error at line 1, column 7"));
}

TEST(JsonText, TheOrderedParseKeepsTheFilesKeyOrderWithTheSameChecks) {
  const ParsedJson<OrderedJson> parsed = parse_ordered_json_text("{\"z\": 1, \"a\": {\"y\": 2, \"b\": 3}}");
  ASSERT_TRUE(parsed.ok()) << parsed.problem;
  EXPECT_EQ(parsed.value.dump(), "{\"z\":1,\"a\":{\"y\":2,\"b\":3}}");
  EXPECT_EQ(parse_json_text("{\"z\": 1, \"a\": 2}").value.dump(), "{\"a\":2,\"z\":1}");
  EXPECT_EQ(parse_ordered_json_text("{\"k\": 1, \"k\": 2}").problem, "k: key given twice; an object may name each key once");
  EXPECT_FALSE(parse_ordered_json_text("[\"\xFF\"]").ok());
}

}  // namespace
}  // namespace genrepro
