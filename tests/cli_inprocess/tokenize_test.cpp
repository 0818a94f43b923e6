// genrepro tokenize: ids, JSON lines in and out, --decode, and one-line errors (exit 2) for bad
// tokenizer files and bad input lines. The ids are GPT-2's (checked against the reference encoder
// in tests/unit/tokenizer); here the verb's wiring and output format are under test.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

std::string data(const std::string& name) { return source_path("tests/cli/data/tokenize/" + name); }

const std::string kModel = tokenizer_dir();

const std::vector<CliCase> kCases = {
    {"ids", {"tokenize", "--model", kModel, "the river bank was"}, 0, R"re(^\[1169,7850,3331,373\]\n$)re", ""},
    {"endoftext", {"tokenize", "--model", kModel, "a<|endoftext|>b"}, 0, R"re(^\[64,50256,65\]\n$)re", ""},
    {"input", {"tokenize", "--model", kModel, "--input", data("prompts.jsonl")}, 0,
     R"re(^\[1169,7850,3331,373\]\n\[64,50256,65\]\n\[33768,98,17312,105,45739,252\]\n$)re", ""},
    {"decode", {"tokenize", "--model", kModel, "--decode", "[1169, 7850, 3331, 373]"}, 0, R"re(^the river bank was\n$)re", ""},
    // Line 3 ends inside "本" (two of its three bytes): JSON output shows U+FFFD there.
    {"decode_input", {"tokenize", "--model", kModel, "--decode", "--input", data("ids.jsonl")}, 0,
     R"re(^\{"text":"the river bank was"\}\n\{"text":"日"\}\n\{"text":"�"\}\n$)re", ""},
    {"help", {"tokenize", "--help"}, 0, R"re(--decode --input)re", ""},
    {"bad_input_line", {"tokenize", "--model", kModel, "--input", data("bad_prompts.jsonl")}, 2, "",
     R"re(^genrepro: error: --input '[^']*bad_prompts.jsonl' line 2: .* has no "text")re", Stderr::one_line},
    {"bad_decode_ids", {"tokenize", "--model", kModel, "--decode", "[50257]"}, 2, "",
     R"re(^genrepro: error: token id 50257 is not in the vocabulary)re", Stderr::one_line},
    {"no_text", {"tokenize", "--model", kModel}, 2, "", R"re(pass TEXT or --input FILE)re", Stderr::one_line},
    {"missing_model_dir", {"tokenize", "--model", data("no-such-dir"), "x"}, 2, "",
     R"re(^genrepro: error: tokenizer directory '[^']*/no-such-dir' does not exist)re", Stderr::one_line},
    {"missing_vocab", {"tokenize", "--model", source_path("tests/cli/data/tokenize"), "x"}, 2, "",
     R"re(^genrepro: error: tokenizer directory '[^']*/tests/cli/data/tokenize' has no vocab.json or encoder.json)re",
     Stderr::one_line},
    {"malformed_vocab", {"tokenize", "--model", data("bad_vocab"), "x"}, 2, "",
     R"re(^genrepro: error: vocab file '[^']*/bad_vocab/vocab.json' is not valid JSON)re", Stderr::one_line},
    {"malformed_merges", {"tokenize", "--model", data("bad_merges"), "x"}, 2, "",
     R"re(^genrepro: error: merges file '[^']*/bad_merges/merges.txt': line 2 "Ġt" is not two tokens)re", Stderr::one_line},
};

class Tokenize : public ::testing::TestWithParam<CliCase> {};
TEST_P(Tokenize, ExitAndOutput) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Tokenize, Tokenize, ::testing::ValuesIn(kCases), CaseName{});

// --input - reads standard input, line by line, like a file.
TEST(Tokenize, InputFromStdin) {
  const std::vector<std::string> args = {"tokenize", "--model", kModel, "--input", "-"};
  const CliResult r = genrepro(args, {read_bytes(data("prompts.jsonl"))});
  EXPECT_EQ(r.exit, 0) << describe(args, r);
  EXPECT_TRUE(Searches(R"re(^\[1169,7850,3331,373\]\n\[64,50256,65\]\n\[33768,98,17312,105,45739,252\]\n$)re", r.out));
}

}  // namespace
}  // namespace genrepro::test
