// check-article on merged evidence from mixed machines: each fact names the environment
// of the runs it rests on where that differs from the reference (the evidence's own environment,
// or the golden's), in the table, in one line per environment, and in --json; nothing of it when
// the environments agree.
#include "golden/article_check.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The article's shape, small: one greedy generation of 3 tokens, one nucleus size at T = 1, p = 0.9.
OrderedJson small_facts() {
  return {{"schema", kArticleFactsSchema},
          {"prompt", "the river bank was"},
          {"generations", OrderedJson::array({{{"name", "greedy"},
                                               {"params", {{"mode", "greedy"}, {"max_new_tokens", 3}}},
                                               {"text", "the river bank was t10 t20 t30"},
                                               {"stop", {{"reason", "max_new_tokens"}, {"step", 3}}}}})},
          {"nucleus_sizes", OrderedJson::array({{{"temperature", 1}, {"top_p", 0.9}, {"step", 0}, {"kept", 7}}})},
          {"eos", {{"token_id", 50256}, {"text", "<|endoftext|>"}}}};
}

// Run 0 greedy, run 1 sampled at T = 1, p = 0.9 (nucleus 7 at its first step), run 2 greedy again.
Evidence article_runs() {
  RunRecord greedy = test::make_run("a/greedy", DecodeMode::greedy, test::greedy_steps(), "a");
  RunRecord sampled = test::make_run("a/p09", DecodeMode::sample, {test::make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 7)}, "a");
  sampled.params.sampling.temperature = 1;
  sampled.params.sampling.top_p = 0.9;
  RunRecord greedy_again = test::make_run("a/greedy-2", DecodeMode::greedy, test::greedy_steps(), "a");
  Evidence e = test::make_evidence({greedy, sampled, greedy_again});
  e.environment.cpu.model = "Intel(R) Xeon(R) Platinum 8375C";
  e.environment.blas.core = "Haswell";
  return e;
}

// Run 1 came from an AMD runner's shard.
Evidence merged() {
  Evidence e = article_runs();
  RunEnvironment amd{e.environment, {1}};
  amd.environment.cpu.model = "AMD EPYC 9R14";
  amd.environment.blas.core = "Zen";
  e.run_environments.push_back(amd);
  return e;
}

const FactCheck& fact(const ArticleCheck& c, const std::string& name) {
  for (const FactCheck& f : c.facts)
    if (f.fact.rfind(name, 0) == 0) return f;
  throw std::runtime_error("no fact " + name);
}

TEST(ArticleCheckEnvironments, FactsOnRunsOfTheOtherMachineNameItsEnvironment) {
  const ArticleCheck c = check_article(small_facts(), "facts.json", EvidenceFile{"merged.json", merged()});
  EXPECT_TRUE(c.passed());
  ASSERT_EQ(c.environments.size(), 1u);
  EXPECT_EQ(c.environments[0].number, 2u);
  EXPECT_EQ(c.environments[0].runs, (std::vector<int64_t>{1}));
  // The nucleus rests on run 1 (the AMD shard's); the greedy text on runs 0 and 2 (this machine's).
  EXPECT_EQ(fact(c, "nucleus").runs, (std::vector<int64_t>{1}));
  EXPECT_EQ(fact(c, "nucleus").environments, (std::vector<std::size_t>{2}));
  EXPECT_EQ(fact(c, "text greedy").runs, (std::vector<int64_t>{0, 2}));
  EXPECT_TRUE(fact(c, "text greedy").environments.empty());
  EXPECT_EQ(fact_environment_text(c, fact(c, "nucleus")), "environment 2 (run 1): blas.core \"Zen\"; and 1 more");

  const std::string text = format_article_check(c);
  EXPECT_THAT(text, HasSubstr("(environment 2 (run 1): blas.core \"Zen\"; and 1 more)"));
  EXPECT_THAT(text, HasSubstr("environment 2 (run 1) differs from the evidence's environment in 2 field(s): blas.core \"Zen\"; "
                              "cpu.model \"AMD EPYC 9R14\"\n"));
  // The greedy rows name no environment: their runs ran in the evidence's own.
  for (std::size_t from = text.find("text greedy"); from != std::string::npos; from = std::string::npos)
    EXPECT_THAT(text.substr(from, text.find('\n', from) - from), Not(HasSubstr("environment")));

  const OrderedJson j = article_check_to_json(c);
  EXPECT_EQ(j["environment_reference"], "the evidence's environment");
  ASSERT_EQ(j["environments"].size(), 1u);
  EXPECT_EQ(j["environments"][0]["environment"], 2);
  EXPECT_EQ(j["environments"][0]["runs"], OrderedJson::array({1}));
  EXPECT_EQ(j["environments"][0]["differences"][1]["field"], "cpu.model");
  EXPECT_EQ(j["environments"][0]["differences"][1]["reference"], "Intel(R) Xeon(R) Platinum 8375C");
  EXPECT_EQ(j["environments"][0]["differences"][1]["value"], "AMD EPYC 9R14");
}

// Against a golden made elsewhere, this machine's runs are named too (environment 1).
TEST(ArticleCheckEnvironments, AgainstTheGoldenEveryDifferingEnvironmentIsNamed) {
  Environment golden = article_runs().environment;
  golden.blas.core = "SkylakeX";
  const ArticleCheck c = check_article(small_facts(), "facts.json", EvidenceFile{"merged.json", merged()}, golden, "the golden's environment");
  ASSERT_EQ(c.environments.size(), 2u);
  EXPECT_EQ(fact(c, "text greedy").environments, (std::vector<std::size_t>{1}));
  EXPECT_EQ(fact_environment_text(c, fact(c, "text greedy")), "environment 1 (runs 0, 2): blas.core \"Haswell\"");
  EXPECT_THAT(format_article_check(c), HasSubstr("environment 1 (runs 0, 2) differs from the golden's environment in 1 field(s)"));
}

TEST(ArticleCheckEnvironments, EqualEnvironmentsShowNoSuchLines) {
  const ArticleCheck c = check_article(small_facts(), "facts.json", EvidenceFile{"one.json", article_runs()});
  EXPECT_TRUE(c.environments.empty());
  for (const FactCheck& f : c.facts) EXPECT_TRUE(f.environments.empty()) << f.fact;
  EXPECT_THAT(format_article_check(c), Not(HasSubstr("environment ")));
  EXPECT_TRUE(article_check_to_json(c)["environments"].empty());
}

}  // namespace
}  // namespace genrepro
