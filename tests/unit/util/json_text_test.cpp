// Untrusted JSON text: the pre-scan (UTF-8 by the same rule as util/utf8.hpp, nesting depth), duplicate keys, and the
// order-keeping parse evidence is read with; and the one JSON writer, which refuses non-numbers.
// (The bounded file read is util/bounded_read.hpp's: bounded_read_test.cpp.)
#include "util/json_text.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "util/utf8.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;

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

// nlohmann writes NaN and infinity as null, silently; the one writer refuses them, naming where.
TEST(JsonDocumentText, RefusesNonNumbersNamingTheirPath) {
  OrderedJson doc = {{"runs", OrderedJson::array({OrderedJson{{"prob", 0.5}}, OrderedJson{{"prob", std::nan("")}}})}};
  try {
    json_document_text(doc);
    FAIL() << "NaN was written";
  } catch (const JsonWriteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot write runs[1].prob: NaN: JSON has no NaN or infinity"));
  }
  nlohmann::json plain = {{"x", -HUGE_VAL}};
  EXPECT_THROW(json_document_text(plain), JsonWriteError);
  plain["x"] = 1.5;
  EXPECT_EQ(json_document_text(plain, -1), "{\"x\":1.5}");
}

}  // namespace
}  // namespace genrepro
