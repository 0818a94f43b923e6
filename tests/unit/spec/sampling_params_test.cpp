#include "spec/sampling_params.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "util/errors.hpp"

namespace genrepro {
namespace {

std::vector<std::string> fields(const std::vector<ParamProblem>& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.field);
  return out;
}

TEST(CheckRunParams, DefaultsAreValid) { EXPECT_TRUE(check_run_params(RunParams{}).empty()); }

TEST(CheckRunParams, BoundaryValuesAreValid) {
  RunParams p;
  p.sampling.temperature = 0;  // greedy
  p.sampling.top_p = 1;        // off
  p.sampling.top_k = 0;        // off
  p.max_new_tokens = 0;
  p.top_candidates = 0;
  p.sampling.sampler_order = {"top_k", "top_p", "temperature"};
  p.sampling.top_p_rule = "hf";
  p.sampling.rng = "portable";
  EXPECT_TRUE(check_run_params(p).empty());
}

TEST(CheckRunParams, NamesEachBadField) {
  RunParams p;
  p.sampling.temperature = -0.5;
  p.sampling.top_p = 0;
  p.sampling.top_k = -1;
  p.sampling.sampler_order = {"temperature", "min_p", "temperature"};
  p.sampling.top_p_rule = "nucleus";
  p.sampling.rng = "mt";
  p.max_new_tokens = -3;
  p.top_candidates = -1;
  const auto problems = check_run_params(p);
  EXPECT_EQ(fields(problems),
            (std::vector<std::string>{"temperature", "top_p", "top_k", "sampler_order", "sampler_order",
                                      "top_p_rule", "rng", "max_new_tokens", "top_candidates"}));
  EXPECT_EQ(problems[0].value, "-0.5");
  EXPECT_EQ(problems[0].allowed, "a finite number >= 0 (0 means greedy)");
  EXPECT_EQ(problems[1].allowed, "a number in (0, 1] (1 turns top-p off)");
  EXPECT_EQ(problems[3].value, "min_p");
  EXPECT_EQ(problems[4].value, "temperature (repeated)");
  EXPECT_EQ(describe_problem(problems[2], "--top-k"),
            "--top-k = -1 is not allowed; allowed: an integer >= 0 (0 turns top-k off)");
}

TEST(CheckRunParams, RejectsNanAndInfinity) {
  RunParams p;
  p.sampling.temperature = std::numeric_limits<double>::quiet_NaN();
  p.sampling.top_p = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(fields(check_run_params(p)), (std::vector<std::string>{"temperature", "top_p"}));
  p.sampling.temperature = std::numeric_limits<double>::infinity();
  p.sampling.top_p = 1.0000001;
  EXPECT_EQ(fields(check_run_params(p)), (std::vector<std::string>{"temperature", "top_p"}));
}

TEST(CheckRunParams, SetParameterWhoseStageIsLeftOut) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.top_p = 0.9;
  p.sampling.sampler_order = {"temperature", "top_k"};
  const auto problems = check_run_params(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(describe_problem(problems[0], "--sampler-order"),
            "--sampler-order = temperature,top_k is not allowed; allowed: an order that contains top_p, "
            "since top_p is 0.9");
  p.sampling.mode = DecodeMode::greedy;  // greedy ignores the chain
  EXPECT_TRUE(check_run_params(p).empty());
}

TEST(ParseSamplerOrder, ParsesAndTrims) {
  EXPECT_EQ(parse_sampler_order("top_k, top_p,temperature"),
            (std::vector<std::string>{"top_k", "top_p", "temperature"}));
  EXPECT_EQ(parse_sampler_order("temperature"), (std::vector<std::string>{"temperature"}));
}

TEST(ParseSamplerOrder, NamesTheBadStage) {
  try {
    parse_sampler_order("temperature,topk");
    FAIL() << "no throw";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()),
              "sampler order 'temperature,topk': unknown stage 'topk'; allowed: a comma-separated list "
              "of distinct stages from {temperature, top_k, top_p}, e.g. temperature,top_k,top_p");
  }
  EXPECT_THROW(parse_sampler_order("top_k,top_k"), SpecError);
  EXPECT_THROW(parse_sampler_order("top_k,"), SpecError);
  EXPECT_THROW(parse_sampler_order(""), SpecError);
}

TEST(ParseSeed, AcceptsDecimalDigitsOnly) {
  EXPECT_EQ(parse_seed("0"), 0u);
  EXPECT_EQ(parse_seed("42"), 42u);
  EXPECT_EQ(parse_seed("18446744073709551615"), UINT64_MAX);
  for (const char* bad : {"-1", "abc", "1.5", "1e3", "+3", " 4", "", "18446744073709551616", "0x10"})
    EXPECT_FALSE(parse_seed(bad).has_value()) << bad;
}

}  // namespace
}  // namespace genrepro
