// genrepro generate: every bad sampling parameter is rejected before a model is even located (no
// --model, and none in the environment), with one line naming the flag and what is allowed,
// exit 2; with the tiny fixture: ids, text, the greedy / sampled mode rule, the context limit,
// and a seed's reproducibility with either RNG.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

std::vector<std::string> gen(std::vector<std::string> extra) {
  std::vector<std::string> args = {"generate", "--prompt", "the river bank was", "--max-new-tokens", "5"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string seed_rejected(const std::string& seed) {
  return "--seed = " + seed + R"re( is not allowed. allowed: a non-negative integer below 2\^64)re";
}

const std::vector<CliCase> kBadFlags = {
    {"temperature_negative", gen({"--temperature", "-1"}), 2, "",
     R"re(--temperature = -1 is not allowed. allowed: 0 \(greedy\) or a number from 1e-30 to 1e\+30)re", Stderr::one_line},
    {"temperature_nan", gen({"--temperature", "nan"}), 2, "", R"re(--temperature = nan is not allowed)re", Stderr::one_line},
    {"temperature_not_a_number", gen({"--temperature", "warm"}), 2, "", R"re(convert: [-][-]temperature = warm)re",
     Stderr::one_line},
    {"top_p_zero", gen({"--top-p", "0"}), 2, "",
     R"re(--top-p = 0 is not allowed. allowed: a number in \(0, 1. \(1 turns top-p off\))re", Stderr::one_line},
    {"top_p_above_one", gen({"--top-p", "1.5"}), 2, "",
     R"re(--top-p = 1.5 is not allowed. allowed: a number in \(0, 1. \(1 turns top-p off\))re", Stderr::one_line},
    {"top_k_negative", gen({"--top-k", "-1"}), 2, "", R"re(--top-k -1: allowed: a whole number from 0 to 9223372036854775807 in decimal digits; 0 turns top-k off)re",
     Stderr::one_line},
    {"seed_minus_1", gen({"--seed=-1"}), 2, "", seed_rejected("-1"), Stderr::one_line},
    {"seed_abc", gen({"--seed=abc"}), 2, "", seed_rejected("abc"), Stderr::one_line},
    {"seed_1_5", gen({"--seed=1.5"}), 2, "", seed_rejected("1.5"), Stderr::one_line},
    {"seed_1e3", gen({"--seed=1e3"}), 2, "", seed_rejected("1e3"), Stderr::one_line},
    {"seed_2_to_the_64", gen({"--seed=18446744073709551616"}), 2, "", seed_rejected("18446744073709551616"),
     Stderr::one_line},
    {"sampler_order_unknown", gen({"--sampler-order", "temperature,min_p"}), 2, "",
     R"re(--sampler-order: .*unknown stage 'min_p'. allowed: .*temperature, top_k, top_p)re", Stderr::one_line},
    {"sampler_order_repeated", gen({"--sampler-order", "top_k,top_p,top_k"}), 2, "",
     R"re(--sampler-order: .*'top_k' appears twice)re", Stderr::one_line},
    {"sampler_order_leaves_out_a_set_stage", gen({"--top-p", "0.9", "--sampler-order", "top_k,temperature"}), 2, "",
     R"re(--sampler-order = top_k,temperature is not allowed. allowed: an order that contains top_p, since top_p is 0.9)re",
     Stderr::one_line},
    {"top_p_rule_unknown", gen({"--top-p-rule", "nucleus"}), 2, "",
     R"re(--top-p-rule = nucleus is not allowed. allowed: one of \{article, hf\})re", Stderr::one_line},
    {"rng_unknown", gen({"--rng", "mt"}), 2, "", R"re(--rng = mt is not allowed. allowed: one of \{torch, portable\})re",
     Stderr::one_line},
    {"greedy_with_sampling_flag", gen({"--greedy", "--temperature", "0.8"}), 2, "", R"re(--greedy cannot be combined with)re",
     Stderr::one_line},
    {"max_new_tokens_negative", {"generate", "--prompt", "x", "--max-new-tokens", "-1"}, 2, "",
     R"re(--max-new-tokens -1: allowed: a whole number from 0 to 9223372036854775807 in decimal digits; 0 records only the first prediction)re",
     Stderr::one_line},
    {"threads_zero", gen({"--threads", "0"}), 2, "", R"re(--threads 0: allowed: a whole number from 1 to 256)re", Stderr::one_line},
    // The frameworks' controls: values read as JSON, checked as in experiment files.
    {"top_n_sigma_nan", gen({"--framework", "llama.cpp", "--top-n-sigma", "nan"}), 2, "",
     R"re(^genrepro: error: --top-n-sigma = nan is not allowed; allowed: a finite number \(<= 0 turns it off, e\.g\. -1\) \(the value is read as JSON\)\n$)re",
     Stderr::one_line},
    {"top_n_sigma_too_large", gen({"--framework", "llama.cpp", "--top-n-sigma", "1e400"}), 2, "",
     R"re(--top-n-sigma = 1e400 is not allowed; allowed: a finite number)re", Stderr::one_line},
    {"dynatemp_range_negative", gen({"--framework", "llama.cpp", "--dynatemp-range", "-0.5"}), 2, "",
     R"re(--dynatemp-range = -0\.5 is not allowed; allowed: a finite number >= 0 \(0 turns it off\))re", Stderr::one_line},
    {"top_n_sigma_is_llama_cpp_only", gen({"--framework", "hf", "--top-n-sigma", "1"}), 2, "",
     R"re(--top-n-sigma = 1\.0 is not allowed; allowed: its off value -1\.0 unless framework llama\.cpp)re", Stderr::one_line},
    // A value thousands of digits long is quoted by its head and its length, not whole.
    {"repeat_penalty_of_500_digits", gen({"--framework", "llama.cpp", "--repeat-penalty", std::string(500, '9')}), 2, "",
     R"re(^genrepro: error: --repeat-penalty = 9{160}\S+ \(500 bytes\) is not allowed; allowed: )re", Stderr::one_line},
    {"bad_words_ids_not_json", gen({"--framework", "hf", "--bad-words-ids", "[" + std::string(500, '1')}), 2, "",
     R"re(^genrepro: error: --bad-words-ids = \[1{159}\S+ \(501 bytes\) is not allowed; allowed: )re", Stderr::one_line},
    // No model given or found (this suite hides the machine's caches): asked not to fall back to
    // the random-weight fixture, or asked for the Hugging Face cache's gpt2 by name.
    {"require_real_model_without_one", gen({"--require-real-model"}), 2, "",
     R"re(--require-real-model: no model given or found .no --model, no .GENREPRO_MODEL, no gpt2 in )re",
     Stderr::one_line},
    {"model_gpt2_is_the_hf_cache_only", gen({"--model", "gpt2"}), 2, "",
     R"re(--model gpt2: no gpt2 snapshot in the Hugging Face cache)re", Stderr::one_line},
};

class GenerateBadFlag : public ::testing::TestWithParam<CliCase> {};
TEST_P(GenerateBadFlag, OneLineExit2) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Generate, GenerateBadFlag, ::testing::ValuesIn(kBadFlags), CaseName{});

const std::vector<CliCase> kOnTheFixture = {
    {"greedy_ids", gen({"--model", tiny_model(), "--ids"}), 0, R"re(^\[[0-9]+(,[0-9]+){4}\]\n$)re",
     R"re(model: .*stop: max_new_tokens after 5 new tokens \(greedy, kv cache\))re"},
    {"text", gen({"--model", tiny_model(), "--no-cache"}), 0, R"re(^the river bank was)re", ""},
    {"temperature_zero_is_greedy", gen({"--model", tiny_model(), "--no-cache", "--temperature", "0", "--ids"}), 0, "",
     R"re(\(greedy, recompute\))re"},
    {"seed_means_sample", gen({"--model", tiny_model(), "--seed", "42", "--ids"}), 0, "", R"re(\(sample, kv cache\))re"},
    // A cap beyond the context is refused, as in experiment files; the largest allowed
    // cap fills the context exactly.
    {"cap_beyond_context",
     {"generate", "--prompt", "the river bank was", "--model", tiny_model(), "--max-new-tokens", "500", "--ids", "--top-k",
      "3", "--seed", "1"},
     2, "", R"re(--max-new-tokens 500: allowed: at most 124 for this prompt)re"},
    {"cap_fills_context",
     {"generate", "--prompt", "the river bank was", "--model", tiny_model(), "--max-new-tokens", "124", "--ids", "--top-k",
      "3", "--seed", "1"},
     0, "", R"re(stop: max_new_tokens after 124 new tokens)re"},
};

class GenerateOnFixture : public ::testing::TestWithParam<CliCase> {};
TEST_P(GenerateOnFixture, ExitAndOutput) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Generate, GenerateOnFixture, ::testing::ValuesIn(kOnTheFixture), CaseName{});

// The article's seed 42 at T = 1, p = 0.9 (tests/reference/article_sampling.py checks the same
// tokens against the article's Python loop): --rng portable must print the same ids as --rng
// torch, and a repeated run (default rng) the same ids again.
TEST(Generate, PortableRngEqualsTorchAndRepeats) {
  const std::vector<std::string> args = {"generate", "--model", tiny_model(), "--prompt", "the river bank was",
                                         "--max-new-tokens", "20", "--ids", "--temperature", "1", "--top-p", "0.9",
                                         "--seed", "42"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = args;
    a.insert(a.end(), extra.begin(), extra.end());
    const CliResult r = genrepro(a);
    EXPECT_EQ(r.exit, 0) << describe(a, r);
    return r.out;
  };
  const std::string torch_ids = with({"--rng", "torch"});
  const std::string portable_ids = with({"--rng", "portable"});
  const std::string again_ids = with({});
  EXPECT_TRUE(Searches(R"re(^\[[0-9]+(,[0-9]+)*\]\n$)re", torch_ids));
  EXPECT_EQ(torch_ids, portable_ids) << "torch and portable RNGs differ";
  EXPECT_EQ(torch_ids, again_ids) << "seed 42 did not reproduce";
}

}  // namespace
}  // namespace genrepro::test
