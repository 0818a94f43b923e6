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

// The pre-scan refuses exactly the ill-formed byte sequences, and so does util/utf8.hpp's rule (one
// rule, one place). Whether each sequence is well-formed comes from the Unicode Standard's
// Table 3-7 (Well-Formed UTF-8 Byte Sequences), written out here, not from the code under test.
struct Utf8Case {
  std::string bytes;
  bool well_formed;
  const char* why;
};

TEST(JsonText, InvalidUtf8IsRefusedByTheUtf8Rule) {
  const Utf8Case cases[] = {
      {"\xC0\xAF", false, "overlong '/': C0 is never a lead byte"},
      {"\xE0\x80\xAF", false, "overlong: after E0 the second byte is A0..BF"},
      {"\xED\xA0\x80", false, "a surrogate, U+D800: after ED the second byte is 80..9F"},
      {"\xF4\x90\x80\x80", false, "beyond U+10FFFF: after F4 the second byte is 80..8F"},
      {"\xF5\x80\x80\x80", false, "F5 is never a lead byte"},
      {"\x80", false, "a continuation byte alone"},
      {"\xE2\x82", false, "'€' cut short"},
      {"\xC1\xBF", false, "overlong: C1 is never a lead byte"},
      {"\xF0\x8F\xBF\xBF", false, "overlong: after F0 the second byte is 90..BF"},
      {"\xFF", false, "FF is never a byte of UTF-8"},
      {"\xC3\xA9", true, "U+00E9 'é': C2..DF then 80..BF"},
      {"\xC2\x80", true, "U+0080, the first two-byte code point"},
      {"\xE2\x82\xAC", true, "U+20AC '€'"},
      {"\xE0\xA0\x80", true, "U+0800, the first three-byte code point"},
      {"\xED\x9F\xBF", true, "U+D7FF, the last before the surrogates"},
      {"\xEE\x80\x80", true, "U+E000, the first after the surrogates"},
      {"\xEF\xBF\xBF", true, "U+FFFF, a noncharacter but well-formed"},
      {"\xF0\x9F\x98\x80", true, "U+1F600"},
      {"\xF4\x8F\xBF\xBF", true, "U+10FFFF, the last code point"},
  };
  int well_formed = 0, ill_formed = 0;
  for (const Utf8Case& c : cases) {
    (c.well_formed ? well_formed : ill_formed) += 1;
    EXPECT_EQ(find_invalid_utf8(c.bytes) == std::string::npos, c.well_formed) << c.why;
    const JsonParseOutcome parsed = parse_json_text("[\"" + c.bytes + "\"]");
    EXPECT_EQ(parsed.ok(), c.well_formed) << c.why << ": " << parsed.problem;
    if (!c.well_formed) EXPECT_THAT(parsed.problem, HasSubstr("line 1, column 3: invalid UTF-8 (byte 0x")) << c.why;
  }
  EXPECT_EQ(well_formed, 9);
  EXPECT_EQ(ill_formed, 10);
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
