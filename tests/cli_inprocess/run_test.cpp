// genrepro run / merge / env: a malformed experiment file is one line, exit 2, and an
// existing --out untouched; bad flags; the environment block; KV cache vs recompute.
// (The article's experiments end to end stay a subprocess test: tests/cli/run_article.py.)
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

struct BadExperiment {
  std::string name;
  std::string file;   // under tests/cli/data/run
  std::string regex;  // the one stderr line
};

const std::vector<BadExperiment> kBadExperiments = {
    {"invalid_json", "invalid_json.json",
     R"re(^genrepro: error: .*invalid_json.json: invalid JSON: parse error at line 3, column 30: syntax error)re"},
    {"deep", "deep.json", R"re(^genrepro: error: .*deep.json: line 1, column 88: JSON nested deeper than 64 levels)re"},
    {"invalid_utf8", "invalid_utf8.json",
     R"re(^genrepro: error: .*invalid_utf8.json: line 2, column 30: invalid UTF-8 \(byte 0xFF\))re"},
    {"wrong_type", "wrong_type.json",
     R"re(^genrepro: error: .*wrong_type.json: runs\[0\]\.temperature = "hot" is not allowed; allowed: 0 \(greedy\) or a number from 1e-30 to 1e\+30)re"},
    {"out_of_range", "out_of_range.json",
     R"re(^genrepro: error: .*out_of_range.json: runs\[1\]\.temperature\[1\] = -0\.5 is not allowed; allowed: 0 \(greedy\) or a number from 1e-30 to 1e\+30)re"},
    {"unknown_key", "unknown_key.json",
     R"re(^genrepro: error: .*unknown_key.json: runs\[0\]\.temprature: unknown key; did you mean "temperature"\?)re"},
    {"empty_prompts", "empty_prompts.json",
     R"re(^genrepro: error: .*empty_prompts.json: prompts: empty list; give at least one prompt)re"},
    {"beyond_context", "beyond_context.json",
     R"re(^genrepro: error: .*beyond_context.json: runs\[0\]\.max_new_tokens = 200 is not allowed; allowed: at most 124 for prompts\[0\] \(4 tokens\) with this model's context of 128 tokens)re"},
    {"missing_file", "no_such_experiment.json",
     R"re(^genrepro: error: .*no_such_experiment.json: no such file; give the path of an experiment file)re"},
};

class BadExperimentFile : public ::testing::TestWithParam<BadExperiment> {};
TEST_P(BadExperimentFile, OneLineExit2OutUntouched) {
  expect_bad_input_keeps_out({"run", source_path("tests/cli/data/run/" + GetParam().file), "--model", tiny_model()},
                             GetParam().regex);
}
INSTANTIATE_TEST_SUITE_P(Run, BadExperimentFile, ::testing::ValuesIn(kBadExperiments), CaseName{});

const std::string kGreedy = source_path("experiments/article/greedy.json");

const std::vector<CliCase> kCases = {
    {"bad_shard", {"run", kGreedy, "--shard", "3/2", "--out", "{scratch}/unused.json"}, 2, "",
     R"re(--shard 3/2: expected I/N with whole numbers 1 <= I <= N)re", Stderr::one_line},
    {"merge_missing_shard", {"merge", "{scratch}/no_such_shard.json", "--out", "{scratch}/unused.json"}, 2, "",
     R"re(no_such_shard.json: no such file)re", Stderr::one_line},
    {"out_is_directory", {"run", kGreedy, "--out", "{scratch}"}, 2, "",
     R"re(--out .*: is a directory; give a file path such as)re", Stderr::one_line},
    {"env_prints_environment", {"env"}, 0, R"re("blas": \{.*"library": .*"threads": \{.*"intra_op": 1)re", ""},
    // The KV cache and recompute must pick the same tokens (exit 0); the diff's own tests cover a
    // divergence (diff_cache_equivalence), which a correct engine cannot be made to produce here.
    {"check_equivalence",
     {"run", kGreedy, source_path("experiments/article/eos.json"), "--model", tiny_model(), "--check-equivalence"}, 0,
     R"re(check-equivalence: KV cache and recompute pick the same tokens)re", ""},
};

class RunCase : public ::testing::TestWithParam<CliCase> {};
TEST_P(RunCase, ExitAndOutput) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Run, RunCase, ::testing::ValuesIn(kCases), CaseName{});

}  // namespace
}  // namespace genrepro::test
