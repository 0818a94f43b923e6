// `genrepro sample` in-process against NoEngine (a verb that reached the engine would exit 99):
// its output on hand-checked rows, both input formats, the history between rows, and every kind of
// bad input as exit 2 with one line naming the file, the row and element, and what is allowed.
#include <algorithm>
#include <cstring>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli/logits_rows.hpp"
#include "cli/run_cli.hpp"
#include "support/scratch_dir.hpp"
#include "unit/cli/no_engine.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

using test_support::NoEngine;
using test_support::VerbResult;

VerbResult sample(std::vector<std::string> args, const std::string& stdin_text = "") {
  args.insert(args.begin(), "sample");
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  Console io{in, out, err};
  NoEngine engine;
  VerbResult r;
  r.exit = run_cli(args, io, engine);
  r.out = out.str();
  r.err = err.str();
  return r;
}

int lines(const std::string& text) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.find_first_not_of(" \t\r") != std::string::npos ? 1 : 0;
  return n;
}

// A .npy file as numpy.save writes it: magic, version 1.0, the header padded to 64 bytes with '\n'.
std::string npy(const std::string& descr, const std::string& shape, const std::vector<float>& values, bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (float v : values) {
    char bytes[4];
    std::memcpy(bytes, &v, 4);
    out.append(bytes, 4);
  }
  return out;
}

const std::string kTopP = R"({"mode": "sample", "top_p": 0.7, "seed": 42})";

TEST(SampleVerb, TopPOnTheLlamaCppExampleListsStagesProbabilitiesAndThePick) {
  // ln 0.1, ln 0.2, ln 0.3, ln 0.4: top-p 0.7 keeps tokens 3 and 2 (0.571429, 0.428571).
  const VerbResult r = sample({"-", "--params", kTopP}, "[-2.3025851, -1.609438, -1.2039728, -0.9162907]\n");
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  const std::regex line(
      R"(\{"index":0,"stages":\[\{"stage":"temperature","kept":4,"ids":\[0,1,2,3\]\},\{"stage":"top_k","kept":4,"ids":\[0,1,2,3\]\},)"
      R"(\{"stage":"top_p","kept":2,"ids":\[2,3\]\}\],"kept":2,"probs":\[\{"id":3,"p":0\.57142\d*\},\{"id":2,"p":0\.42857\d*\}\],)"
      R"("pick":[23],"draw":\{"rule":"exponential_race","margin":[0-9.e-]+,"runner_up":[23]\}\}
)");
  EXPECT_TRUE(std::regex_match(r.out, line)) << r.out;
  EXPECT_EQ(r.err,
            "sample: 1 rows of 4 logits (jsonl); framework article, stages [temperature, top_k, top_p], draw exponential_race "
            "(rng torch: the portable race, which draws as torch.multinomial does), seed 42\n");
}

TEST(SampleVerb, NpyAndJsonLinesGiveTheSameLines) {
  test::ScratchDir dir("sample");
  const std::vector<float> rows = {0.5f, 1.5f, -0.25f, 1.0f, 2.0f, 0.0f, 0.0f, -1.0f};
  const std::string params = R"({"mode": "sample", "temperature": 0.8, "seed": 7})";
  const VerbResult a = sample({dir.write("rows.npy", npy("<f4", "(2, 4)", rows)), "--params", params});
  const VerbResult b = sample({dir.write("rows.jsonl", "[0.5, 1.5, -0.25, 1.0]\n\n[2, 0, 0, -1]\n"), "--params", params});
  ASSERT_EQ(a.exit, kExitOk) << a.err;
  ASSERT_EQ(b.exit, kExitOk) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(lines(a.out), 2);
  // One row as shape (V,).
  const VerbResult one = sample({dir.write("row.npy", npy("<f4", "(4,)", {0.5f, 1.5f, -0.25f, 1.0f})), "--params", params});
  ASSERT_EQ(one.exit, kExitOk) << one.err;
  EXPECT_EQ(one.out, a.out.substr(0, a.out.find('\n') + 1));
}

TEST(SampleVerb, EachPickJoinsTheHistoryUnlessNoAccept) {
  // Hugging Face greedy with no_repeat_ngram_size 2 after [1, 2, 1]: row 0 cannot pick 2 (it would
  // repeat the bigram 1 2) and picks 3; the history is then [1, 2, 1, 3] and row 1 picks 2.
  const std::string params = R"({"mode": "greedy", "framework": "hf", "no_repeat_ngram_size": 2})";
  const std::string rows = "[-9, -9, 5, 4]\n[-9, -9, 5, 4]\n";
  const VerbResult accept = sample({"-", "--params", params, "--history", "[1, 2, 1]"}, rows);
  ASSERT_EQ(accept.exit, kExitOk) << accept.err;
  EXPECT_NE(accept.out.find("\"index\":0,\"stages\":[{\"stage\":\"no_repeat_ngram_size\",\"kept\":3,\"ids\":[0,1,3]}],\"kept\":1,"
                            "\"probs\":[{\"id\":3,\"p\":1}],\"pick\":3}"),
            std::string::npos)
      << accept.out;
  EXPECT_NE(accept.out.find("\"index\":1,\"stages\":[{\"stage\":\"no_repeat_ngram_size\",\"kept\":4"), std::string::npos) << accept.out;
  EXPECT_NE(accept.out.find("\"pick\":2}"), std::string::npos) << accept.out;
  const VerbResult fixed = sample({"-", "--params", params, "--history", "[1, 2, 1]", "--no-accept"}, rows);
  ASSERT_EQ(fixed.exit, kExitOk) << fixed.err;
  EXPECT_EQ(fixed.out.find("\"pick\":2"), std::string::npos) << fixed.out;
  EXPECT_NE(fixed.err.find("history fixed (--no-accept)"), std::string::npos);
}

TEST(SampleVerb, LlamaCppPresetDrawsWithDistAndMaxKeptHidesLongLists) {
  const std::string params = R"({"mode": "sample", "framework": "llama.cpp", "seed": 3})";
  const VerbResult r = sample({"-", "--params", params, "--max-kept", "1"}, "[1, 2, 3, 4, 5]\n");
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.err.find("framework llama.cpp, stages [top_k, top_p, min_p, temperature], draw dist, seed 3"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("{\"stage\":\"top_k\",\"kept\":5}"), std::string::npos) << r.out;  // 5 > --max-kept: no ids
  EXPECT_NE(r.out.find("\"rule\":\"inverse_cdf\""), std::string::npos) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"("probs":\[\{"id":4,"p":[0-9.e-]+\}\],)"))) << r.out;  // the most probable only
}

TEST(SampleVerb, HelpExplainsFormatsOutputAndAnExample) {
  const VerbResult r = sample({"--help"});
  EXPECT_EQ(r.exit, 0);
  for (const char* part : {"JSON array of numbers per line", "'<f4'", "--history", "--no-accept", "--max-kept", "--eos", "Example (",
                           "rng torch draws with the portable race", "inverse_cdf"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part;
}

struct BadInput {
  const char* name;
  std::string file;            // written to the scratch directory as "in" (empty name: stdin)
  std::vector<std::string> args;  // after FILE
  std::string stderr_regex;
};

TEST(SampleVerb, EveryBadInputIsExit2WithOneLine) {
  test::ScratchDir dir("sample-bad");
  const std::string ok = "[1, 2, 3]\n";
  const std::vector<BadInput> cases = {
      {"ragged rows", "[1, 2, 3]\n[1, 2]\n", {}, R"(in: row 1 \(line 2\): 2 logits, where row 0 \(line 1\) has 3; allowed: .*same length)"},
      {"NaN", "[1, NaN, 3]\n", {}, R"(in: row 0 \(line 1\), element 1: 'NaN' is NaN; allowed: a finite number)"},
      {"infinity", "[1, 2]\n[-Infinity, 0]\n", {}, R"(in: row 1 \(line 2\), element 0: '-Infinity' is infinity; allowed: a finite)"},
      {"beyond float32", "[1, 1e39]\n", {}, R"(in: row 0 \(line 1\), element 1: '1e39' is beyond float32's range)"},
      {"a string", "[1, \"2\"]\n", {}, R"(in: row 0 \(line 1\), element 1: '"2"' is not a number; allowed: a finite number)"},
      {"a word", "[1, true]\n", {}, R"(element 1: 'true' is not a number)"},
      {"empty file", "", {}, R"(in: holds no rows; allowed: one JSON array of finite numbers per line)"},
      {"blank lines only", "\n  \n", {}, R"(in: holds no rows)"},
      {"empty row", "[1]\n[]\n", {}, R"(in: row 1 \(line 2\): the array is empty \(no logits\); allowed: )"},
      {"not an array", "{\"logits\": [1]}\n", {}, R"(in: row 0 \(line 1\): '\{"logits": \[1\]\}' is not a JSON array)"},
      {"unclosed", "[1, 2\n", {}, R"(in: row 0 \(line 1\): the array is not closed with '\]')"},
      {"text after", "[1, 2] 3\n", {}, R"(in: row 0 \(line 1\): text after the array: '3')"},
      {"npy float64", npy("<f8", "(2,)", {0, 0, 0, 0}), {}, R"(in: dtype '<f8' is not allowed; allowed: dtype '<f4')"},
      {"npy big-endian", npy(">f4", "(2,)", {0, 0}), {}, R"(in: dtype '>f4' is not allowed)"},
      {"npy fortran", npy("<f4", "(2, 2)", {0, 0, 0, 0}, true), {}, R"(in: fortran_order True is not allowed)"},
      {"npy 3-D", npy("<f4", "(1, 1, 2)", {0, 0}), {}, R"(in: shape \(1, 1, 2\) is not allowed)"},
      {"npy scalar", npy("<f4", "()", {0}), {}, R"(in: shape \(\) is not allowed)"},
      {"npy no rows", npy("<f4", "(0, 3)", {}), {}, R"(in: shape \(0, 3\) holds no rows)"},
      {"npy empty rows", npy("<f4", "(2, 0)", {}), {}, R"(in: shape \(2, 0\): the rows are empty)"},
      {"npy short data", npy("<f4", "(2, 2)", {0, 0, 0}), {}, R"(in: the data is 12 bytes; shape \(2, 2\) of float32 needs 16)"},
      {"npy NaN", npy("<f4", "(2, 2)", {0, 0, 0, std::nanf("")}), {}, R"(in: row 1, element 1: NaN is not allowed; allowed: finite)"},
      {"npy cut header", std::string("\x93NUMPY\x01", 7), {}, R"(in: .npy header is cut short)"},
      {"params temperature", ok, {"--params", R"({"mode": "sample", "temperature": -1, "seed": 1})"},
       R"(--params: temperature = -1 is not allowed; allowed: 0 \(greedy\) or a number)"},
      {"params unknown key", ok, {"--params", R"({"mode": "sample", "temprature": 1, "seed": 1})"},
       R"(--params: temprature: unknown key; did you mean "temperature"\?)"},
      {"params no seed", ok, {"--params", R"({"mode": "sample"})"}, R"(--params: seed: missing; mode "sample" needs a seed)"},
      {"params grid", ok, {"--params", R"({"mode": "sample", "seed": [1, 2]})"}, R"(--params: expands to 2 runs)"},
      {"params loop key", ok, {"--params", R"({"mode": "greedy", "max_new_tokens": 5})"}, R"(--params: max_new_tokens: is a key of the generation loop)"},
      {"params not json", ok, {"--params", "{mode: greedy}"}, R"(--params: .*give one run entry)"},
      {"params not an object", ok, {"--params", "5"}, R"(--params = 5 is not allowed; allowed: an object)"},
      {"params text control", ok, {"--params", R"({"mode": "greedy", "framework": "hf", "bad_words_ids": ["the cat"]})"},
       R"(--params: bad_words_ids\[0\] = "the cat" is a text; allowed: token ids)"},
      {"params control id", ok, {"--params", R"({"mode": "greedy", "framework": "hf", "suppress_tokens": [3]})"},
       R"(--params: suppress_tokens holds token id 3, which is not allowed; allowed: ids from 0 to 2 \(the rows of .*/in hold 3 logits\))"},
      {"params missing file", ok, {"--params", "@/nonexistent/entry.json"}, R"(--params @/nonexistent/entry.json: no such file)"},
      {"history outside", ok, {"--history", "[0, 3]"}, R"(--history: element 1 = 3 is not allowed; allowed: ids from 0 to 2)"},
      {"history negative", ok, {"--history", "[-1]"}, R"(--history: element 0 = -1 is not allowed; allowed: token ids >= 0)"},
      {"history not ids", ok, {"--history", "[1.5]"}, R"(--history: .*not an integer)"},
      {"eos negative", ok, {"--eos", "-1"}, R"(--eos -1: allowed: a whole number from 0 to 9223372036854775807 in decimal digits; a token id)"},
      {"max-kept negative", ok, {"--max-kept", "-2"}, R"(--max-kept -2: allowed: a whole number from 0 to)"},
      {"all masked", ok, {"--params", R"({"mode": "greedy", "framework": "hf", "suppress_tokens": [0, 1, 2]})"},
       R"(in: row 0: no token is left to pick after the suppress_tokens stage)"},
  };
  for (const BadInput& c : cases) {
    std::vector<std::string> args = {dir.write("in", c.file)};
    if (std::find(c.args.begin(), c.args.end(), "--params") == c.args.end()) args.insert(args.end(), {"--params", R"({"mode": "greedy"})"});
    args.insert(args.end(), c.args.begin(), c.args.end());
    const VerbResult r = sample(args);
    EXPECT_EQ(r.exit, kExitBadInput) << c.name << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.name << ": " << r.err;
    EXPECT_TRUE(std::regex_search(r.err, std::regex("^genrepro: error: .*" + c.stderr_regex))) << c.name << ": " << r.err;
  }
  // Standard input is named as such.
  const VerbResult r = sample({"-", "--params", R"({"mode": "greedy"})"}, "[1, x]\n");
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_NE(r.err.find("<stdin>: row 0 (line 1), element 1: 'x' is not a number"), std::string::npos) << r.err;
  const VerbResult missing = sample({dir / "missing.jsonl", "--params", R"({"mode": "greedy"})"});
  EXPECT_EQ(missing.exit, kExitBadInput);
  EXPECT_NE(missing.err.find("missing.jsonl: no such file; allowed: a JSON-lines or .npy file"), std::string::npos) << missing.err;
}

TEST(SampleVerb, ParamsFromAFileAndAFileNameInItsMessages) {
  test::ScratchDir dir("sample-params");
  const std::string entry = dir.write("entry.json", R"({"mode": "sample", "framework": "hf", "top_k": 2, "seed": 5})");
  const VerbResult r = sample({"-", "--params", "@" + entry}, "[1, 2, 3]\n");
  ASSERT_EQ(r.exit, kExitOk) << r.err;
  EXPECT_NE(r.err.find("framework hf, stages [top_k]"), std::string::npos) << r.err;
  const std::string bad = dir.write("bad.json", R"({"mode": "sample", "framework": "hf", "top_k": -2, "seed": 5})");
  const VerbResult refused = sample({"-", "--params", "@" + bad}, "[1, 2, 3]\n");
  EXPECT_EQ(refused.exit, kExitBadInput);
  EXPECT_NE(refused.err.find("--params @" + bad + ": top_k = -2 is not allowed"), std::string::npos) << refused.err;
}

TEST(LogitsRows, NumbersAreRoundedToFloat32AsNumpyDoes) {
  const LogitsRows rows = parse_logits("[0.1, 1e-50, -0, 3.4028235e38]", "x");
  EXPECT_EQ(rows.rows[0], (std::vector<float>{0.1f, 0.0f, -0.0f, 3.4028235e38f}));
  EXPECT_EQ(rows.format, "jsonl");
}

}  // namespace
}  // namespace genrepro::cli
