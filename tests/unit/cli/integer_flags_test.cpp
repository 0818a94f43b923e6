// Integers on the command line are decimal only (cli/flag_kinds.hpp, docs/validation.md): every
// integer flag of every verb, found from the command line itself (integer_flags()), reads `050` as
// fifty and refuses hex, octal and binary prefixes, signs and exponents it cannot mean, and values
// outside its range, naming the flag, the value and the range; a value is never clamped.
#include "cli/run_cli.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/flag_kinds.hpp"
#include "unit/cli/no_engine.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

using test_support::RecordingEngine;

using Result = test_support::VerbResult;

Result cli(const std::vector<std::string>& args) {
  RecordingEngine engine;
  return test_support::run_verb(args, engine);
}

// The arguments each verb needs before its flags parse (--parse-only opens no file).
std::vector<std::string> base_args(const std::string& verb) {
  static const std::map<std::string, std::vector<std::string>> kBase = {
      {"generate", {"generate", "--prompt", "x"}},
      {"run", {"run", "x.json"}},
      {"plan", {"plan", "x.json"}},
      {"replay", {"replay", "golden.json"}},
      {"sensitivity", {"sensitivity", "x.json", "--out", "sens"}},
      {"sample", {"sample", "rows.jsonl", "--params", "{}"}},
  };
  const auto it = kBase.find(verb);
  return it == kBase.end() ? std::vector<std::string>{verb} : it->second;
}

Result with_flag(const IntegerFlag& f, const std::string& value) {
  std::vector<std::string> args = {"--parse-only"};
  for (const std::string& a : base_args(f.verb)) args.push_back(a);
  args.push_back(f.flag);
  args.push_back(value);
  return cli(args);
}

std::string describe(const IntegerFlag& f, const std::string& value, const Result& r) {
  return "genrepro " + f.verb + " " + f.flag + " " + value + " -> exit " + std::to_string(r.exit) + ", stderr: " + r.err;
}

TEST(IntegerFlags, TheCommandLineHasTheIntegerFlagsThisTestExpects) {
  // A control that the enumeration finds flags at all (an empty list would pass every test below).
  std::vector<std::string> found;
  for (const IntegerFlag& f : integer_flags()) found.push_back(f.verb + " " + f.flag);
  for (const char* expected : {"generate --max-new-tokens", "generate --top-k", "generate --threads", "generate --batch",
                               "run --threads", "run --max-runs", "run --top-candidates", "run --batch",
                               "plan --max-runs", "plan --threads", "replay --threads", "sample --eos", "sample --max-kept"})
    EXPECT_NE(std::find(found.begin(), found.end(), expected), found.end()) << expected;
}

TEST(IntegerFlags, EveryIntegerFlagReadsLeadingZerosAsDecimal) {
  for (const IntegerFlag& f : integer_flags()) {
    for (const std::string value : {"050", "0050", "5"}) {
      const Result r = with_flag(f, value);
      EXPECT_EQ(r.exit, kExitOk) << describe(f, value, r);
    }
  }
}

TEST(IntegerFlags, EveryIntegerFlagRefusesWhatIsNotADecimalNumberInItsRange) {
  const std::vector<std::string> refused = {"0x10", "0X10", "0o10", "0b10", "1e3", "+5", " 5", "5 ", "",
                                            "99999999999999999999", "18446744073709551616", "-1", "-9223372036854775809"};
  for (const IntegerFlag& f : integer_flags()) {
    const IntegerRange range = integer_flag_range(f.flag, f.is_unsigned);
    // The message names the flag, the value as written and the whole range.
    for (const std::string& value : refused) {
      if (value == "-1" && range.min < 0) continue;
      const Result r = with_flag(f, value);
      EXPECT_EQ(r.exit, kExitBadInput) << describe(f, value, r);
      const std::string expected = "genrepro: error: " + f.flag + " " + value + ": allowed: a whole number from " +
                                   std::to_string(range.min) + " to " + std::to_string(range.max) + " in decimal digits" +
                                   (range.note.empty() ? "" : "; " + range.note) + "\n";
      EXPECT_EQ(r.err, expected) << describe(f, value, r);
    }
    // Just past either end of the range.
    const std::string above = std::to_string(range.max) + "0";
    EXPECT_EQ(with_flag(f, above).exit, kExitBadInput) << describe(f, above, with_flag(f, above));
    EXPECT_EQ(with_flag(f, std::to_string(range.max)).exit, kExitOk) << f.verb << " " << f.flag;
    if (range.min > 0) {
      const std::string below = std::to_string(range.min - 1);
      EXPECT_EQ(with_flag(f, below).exit, kExitBadInput) << describe(f, below, with_flag(f, below));
    }
  }
}

TEST(IntegerFlags, TheValueThatReachesTheRequestIsTheDecimalOne) {
  RecordingEngine engine;
  std::istringstream in;
  std::ostringstream out, err;
  Console io{in, out, err};
  ASSERT_EQ(run_cli({"generate", "--prompt", "x", "--max-new-tokens", "050", "--top-k", "010", "--threads", "08"}, io, engine),
            kExitOk)
      << err.str();
  ASSERT_EQ(engine.generated.size(), 1u);
  EXPECT_EQ(engine.generated[0].params.max_new_tokens, 50);   // octal would be 40
  EXPECT_EQ(engine.generated[0].params.sampling.top_k, 10);   // octal would be 8
  EXPECT_EQ(engine.generated[0].threads, 8);                  // octal: "Could not convert"
}

TEST(IntegerFlags, CheckedDecimalKeepsTheWholeInt64Range) {
  const IntegerRange int64_range = integer_flag_range("--no-such-flag", false);
  EXPECT_EQ(checked_decimal("--x", "-9223372036854775808", int64_range), "-9223372036854775808");
  EXPECT_EQ(checked_decimal("--x", "9223372036854775807", int64_range), "9223372036854775807");
  EXPECT_EQ(checked_decimal("--x", "-0", int64_range), "0");
  EXPECT_THROW(checked_decimal("--x", "9223372036854775808", int64_range), UsageError);
  const IntegerRange uint64_range = integer_flag_range("--no-such-flag", true);
  EXPECT_EQ(checked_decimal("--x", "18446744073709551615", uint64_range), "18446744073709551615");
  EXPECT_THROW(checked_decimal("--x", "-1", uint64_range), UsageError);
}

}  // namespace
}  // namespace genrepro::cli
