#include "params/sampling_params.hpp"

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
  p.sampling.sampler_order = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
  p.sampling.top_p_rule = TopPRule::hf;
  p.sampling.rng = Rng::portable;
  EXPECT_TRUE(check_run_params(p).empty());
}

TEST(CheckRunParams, NamesEachBadField) {
  RunParams p;
  p.sampling.temperature = -0.5;
  p.sampling.top_p = 0;
  p.sampling.top_k = -1;
  p.sampling.sampler_order = {SamplerStage::temperature, SamplerStage::top_p, SamplerStage::temperature};
  p.max_new_tokens = -3;
  p.top_candidates = -1;
  const auto problems = check_run_params(p);
  EXPECT_EQ(fields(problems), (std::vector<std::string>{"temperature", "top_p", "top_k", "sampler_order",
                                                        "max_new_tokens", "top_candidates"}));
  EXPECT_EQ(problems[0].value, "-0.5");
  EXPECT_EQ(problems[0].allowed, "0 (greedy) or a number from 1e-30 to 1e+30 (beyond them logits / T leaves float32's range)");
  EXPECT_EQ(problems[1].allowed, "a number in (0, 1] (1 turns top-p off)");
  EXPECT_EQ(problems[3].value, "temperature (repeated)");
  EXPECT_EQ(problems[3].allowed, "a comma-separated list of distinct stages from {temperature, top_k, top_p}");
  EXPECT_EQ(describe_problem(problems[2], "--top-k"),
            "--top-k = -1 is not allowed; allowed: an integer >= 0 (0 turns top-k off)");
}

TEST(CheckRunParams, NameProblemsJoinAtTheirFieldsPlace) {
  // A CLI reads --top-p-rule and --rng as names first; their problems must still come after
  // the numbers and the order, and before max_new_tokens, as they always did.
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.top_p = 0.9;
  p.sampling.sampler_order = {SamplerStage::top_k};
  p.max_new_tokens = -1;
  const std::vector<ParamProblem> names = {*check_rng("mt").problem, *check_top_p_rule("x").problem};
  EXPECT_EQ(fields(check_run_params(p, names)),
            (std::vector<std::string>{"sampler_order", "top_p_rule", "rng", "max_new_tokens"}));
  p.sampling.temperature = -1;
  EXPECT_EQ(fields(check_run_params(p, names)).front(), "temperature");
  EXPECT_EQ(fields(check_run_params(RunParams{}, names)), (std::vector<std::string>{"top_p_rule", "rng"}));
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
  p.sampling.sampler_order = {SamplerStage::temperature, SamplerStage::top_k};
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
            (std::vector<SamplerStage>{SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature}));
  EXPECT_EQ(parse_sampler_order("temperature"), (std::vector<SamplerStage>{SamplerStage::temperature}));
  EXPECT_EQ(parse_sampler_order("\ttop_p "), (std::vector<SamplerStage>{SamplerStage::top_p}));
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
  const auto message = [](const std::string& text) {
    try {
      parse_sampler_order(text);
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  const std::string stages = "a comma-separated list of distinct stages from {temperature, top_k, top_p}";
  EXPECT_EQ(message("top_k,top_k"), "sampler order 'top_k,top_k': stage 'top_k' appears twice; allowed: " + stages);
  EXPECT_EQ(message("top_k,"), "sampler order 'top_k,': empty stage name; allowed: " + stages + ", e.g. temperature,top_k,top_p");
  EXPECT_EQ(message(""), "sampler order '': empty stage name; allowed: " + stages + ", e.g. temperature,top_k,top_p");
  EXPECT_EQ(message(",top_k"), "sampler order ',top_k': unknown stage ''; allowed: " + stages + ", e.g. temperature,top_k,top_p");
  EXPECT_EQ(message("Top_k"), "sampler order 'Top_k': unknown stage 'Top_k'; allowed: " + stages + ", e.g. temperature,top_k,top_p");
}

// ---- names <-> enums: one table per enum, the names the evidence has always written ----

TEST(EnumNames, ToStringIsTheEvidenceName) {
  EXPECT_STREQ(to_string(SamplerStage::temperature), "temperature");
  EXPECT_STREQ(to_string(SamplerStage::top_k), "top_k");
  EXPECT_STREQ(to_string(SamplerStage::top_p), "top_p");
  EXPECT_STREQ(to_string(TopPRule::article), "article");
  EXPECT_STREQ(to_string(TopPRule::hf), "hf");
  EXPECT_STREQ(to_string(Rng::torch), "torch");
  EXPECT_STREQ(to_string(Rng::portable), "portable");
  EXPECT_EQ(sampler_stage_names(), (std::vector<std::string>{"temperature", "top_k", "top_p"}));
  EXPECT_EQ(top_p_rule_names(), (std::vector<std::string>{"article", "hf"}));
  EXPECT_EQ(rng_names(), (std::vector<std::string>{"torch", "portable"}));
}

TEST(EnumNames, ParseInvertsToStringForEveryValue) {
  for (SamplerStage v : kSamplerStages) EXPECT_EQ(parse_sampler_stage(to_string(v)), v) << to_string(v);
  for (TopPRule v : kTopPRules) EXPECT_EQ(parse_top_p_rule(to_string(v)), v) << to_string(v);
  for (Rng v : kRngs) EXPECT_EQ(parse_rng(to_string(v)), v) << to_string(v);
  EXPECT_EQ(stage_names({SamplerStage::top_p, SamplerStage::temperature}),
            (std::vector<std::string>{"top_p", "temperature"}));
  EXPECT_TRUE(stage_names({}).empty());
}

TEST(EnumNames, ParseAcceptsOnlyTheExactNames) {
  for (const char* bad : {"", "Temperature", " top_k", "top_p ", "top-p", "topk", "min_p", "?"})
    EXPECT_FALSE(parse_sampler_stage(bad).has_value()) << bad;
  for (const char* bad : {"", "Article", "HF", "nucleus", "hf ", "?"}) EXPECT_FALSE(parse_top_p_rule(bad).has_value()) << bad;
  for (const char* bad : {"", "Torch", "mt", "mt19937", " portable", "?"}) EXPECT_FALSE(parse_rng(bad).has_value()) << bad;
}

TEST(CheckNames, ValuesOrTheProblemInTheSharedWords) {
  EXPECT_EQ(check_top_p_rule("hf").value, TopPRule::hf);
  EXPECT_FALSE(check_top_p_rule("hf").problem.has_value());
  EXPECT_EQ(check_rng("portable").value, Rng::portable);
  const auto rule = check_top_p_rule("nucleus");
  ASSERT_TRUE(rule.problem.has_value());
  EXPECT_FALSE(rule.value.has_value());
  EXPECT_EQ(describe_problem(*rule.problem, "--top-p-rule"),
            "--top-p-rule = nucleus is not allowed; allowed: one of {article, hf}");
  const auto rng = check_rng("");
  ASSERT_TRUE(rng.problem.has_value());
  EXPECT_EQ(describe_problem(*rng.problem, "runs[0].rng"), "runs[0].rng =  is not allowed; allowed: one of {torch, portable}");
  EXPECT_EQ(rng.problem->field, "rng");
  EXPECT_EQ(rule.problem->field, "top_p_rule");
}

TEST(CheckNames, SamplerOrderNamesTheFirstUnknownOrRepeatedStage) {
  EXPECT_EQ(check_sampler_order({"top_k", "temperature"}).value,
            (std::vector<SamplerStage>{SamplerStage::top_k, SamplerStage::temperature}));
  const auto problem_of = [](const std::vector<std::string>& names) {
    const auto checked = check_sampler_order(names);
    EXPECT_FALSE(checked.value.has_value());
    return checked.problem ? describe_problem(*checked.problem, "runs[0].sampler_order") : std::string("no problem");
  };
  const std::string allowed = " is not allowed; allowed: a comma-separated list of distinct stages from {temperature, top_k, top_p}";
  EXPECT_EQ(problem_of({"temperature", "top_q"}), "runs[0].sampler_order = top_q" + allowed);
  EXPECT_EQ(problem_of({"temperature", "temperature", "foo"}), "runs[0].sampler_order = temperature (repeated)" + allowed);
  EXPECT_EQ(problem_of({"foo", "temperature", "temperature"}), "runs[0].sampler_order = foo" + allowed);
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
