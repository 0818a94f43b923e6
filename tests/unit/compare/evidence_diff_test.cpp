// diff on small hand-made evidence: every verdict, the divergence report, the precedence. The
// distributions are written out by hand (evidence_builders.hpp) so each expected verdict can be
// checked against docs/diff.md on paper. Reading evidence files is evidence_read_test.cpp's.
#include "compare/evidence_diff.hpp"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/diff_format.hpp"
#include "evidence/evidence.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;

constexpr DecodeMode kGreedy = DecodeMode::greedy;
constexpr DecodeMode kSample = DecodeMode::sample;

EvidenceDiff diff_docs(const Evidence& golden, const Evidence& current, double tol = kDefaultProbTolerance) {
  return diff_evidence({EvidenceFile{"golden.json", golden}}, EvidenceFile{"new.json", current}, EvidenceDiffOptions{tol});
}

// A copy: callers often pass a temporary EvidenceDiff.
RunDiff only_run(const EvidenceDiff& d) {
  EXPECT_EQ(d.runs.size(), 1u);
  return d.runs.empty() ? RunDiff{} : d.runs.front();
}

TEST(EvidenceDiff, IdenticalEvidenceAgrees) {
  const Evidence doc = make_evidence({make_run("a", kGreedy, greedy_steps()), make_run("b", kSample, greedy_steps())});
  const EvidenceDiff d = diff_docs(doc, doc);
  EXPECT_TRUE(d.agree());
  EXPECT_EQ(d.differing(), 0u);
  EXPECT_TRUE(d.environment.empty());
  EXPECT_EQ(diff_summary_line(d), "diff: 2 runs compared, 2 agree, 0 differ; 0 missing, 0 extra; prob tolerance 0.0001");
}

TEST(EvidenceDiff, OneTokenChangeIsReportedWithStepBothTokensAndMargin) {
  std::vector<StepRecord> changed = greedy_steps();
  changed[2] = make_step(2, 31, {{30, 0.7}, {31, 0.2}});  // same distribution, the runner-up picked
  const EvidenceDiff d = diff_docs(make_evidence({make_run("a", kGreedy, greedy_steps())}),
                                   make_evidence({make_run("a", kGreedy, changed)}));
  EXPECT_FALSE(d.agree());
  const RunDiff& r = only_run(d);
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->step, 2);
  EXPECT_EQ(r.divergence->golden.id, 30);
  EXPECT_EQ(r.divergence->current.id, 31);
  EXPECT_DOUBLE_EQ(*r.divergence->golden.prob_in_golden, 0.7);
  EXPECT_DOUBLE_EQ(*r.divergence->current.prob_in_golden, 0.2);
  EXPECT_DOUBLE_EQ(*r.divergence->golden_margin, 0.7 - 0.2);
  // Greedy cannot pick the runner-up of an unchanged distribution unless the picker changed.
  EXPECT_EQ(r.verdict, Verdict::sampler_change);
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("run a: sampler/RNG change at new token 3 (steps[2])"));
  EXPECT_THAT(text, HasSubstr("golden token: 30 \" t30\"  p(golden) 0.7  p(new) 0.7"));
  EXPECT_THAT(text, HasSubstr("new token:    31 \" t31\"  p(golden) 0.2  p(new) 0.2"));
  EXPECT_THAT(text, HasSubstr("margin (best - second): golden 0.5, new 0.5"));
  EXPECT_THAT(text, HasSubstr("diff: 1 runs compared, 0 agree, 1 differ (1 sampler/RNG change)"));
}

// Golden picks 20 over 21 by 3e-5, the new build by 2e-5 the other way: both within 1e-4.
std::pair<Evidence, Evidence> near_tie_pair() {
  std::vector<StepRecord> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.40003}, {21, 0.40000}});
  n[1] = make_step(1, 21, {{21, 0.40002}, {20, 0.39999}});
  return {make_evidence({make_run("a", kGreedy, g)}), make_evidence({make_run("a", kGreedy, n)})};
}

TEST(EvidenceDiff, FlipWithinToleranceIsANearTie) {
  const auto [g, n] = near_tie_pair();
  const EvidenceDiff d = diff_docs(g, n);
  const RunDiff& r = only_run(d);
  EXPECT_EQ(r.verdict, Verdict::near_tie) << r.reason;
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->step, 1);
  EXPECT_DOUBLE_EQ(*r.divergence->golden.prob_in_golden, 0.40003);
  EXPECT_DOUBLE_EQ(*r.divergence->golden.prob_in_new, 0.39999);
  EXPECT_DOUBLE_EQ(*r.divergence->current.prob_in_golden, 0.40000);
  EXPECT_DOUBLE_EQ(*r.divergence->current.prob_in_new, 0.40002);
  EXPECT_THAT(format_diff_text(d), HasSubstr("run a: near-tie at new token 2 (steps[1])"));
}

TEST(EvidenceDiff, SameFlipBeyondATighterToleranceIsARegression) {
  // With --prob-tolerance 1e-6 the 4e-5 move of token 20 is itself a change of the model.
  const auto [g, n] = near_tie_pair();
  const RunDiff& r = only_run(diff_docs(g, n, 1e-6));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("model's distribution changed beyond tolerance at new token 2 (steps[1])"));
}

TEST(EvidenceDiff, ChangedTopPIsAKeptSetChange) {
  std::vector<StepRecord> g = greedy_steps(), n = greedy_steps();
  g[0] = make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 35);
  n[0] = make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 20);
  n[0].top[0].prob = 0.65;  // renormalized over the smaller nucleus
  n[0].prob = 0.65;
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}}, 20);
  RunRecord gr = make_run("a", kSample, g), nr = make_run("a", kSample, n);
  gr.params.sampling.top_p = 0.9;
  nr.params.sampling.top_p = 0.8;
  const RunDiff& r = only_run(diff_docs(make_evidence({gr}), make_evidence({nr})));
  EXPECT_EQ(r.verdict, Verdict::kept_set_change) << r.reason;
  EXPECT_EQ(r.first_difference_step, 0);
  ASSERT_EQ(r.params.size(), 1u);
  EXPECT_EQ(r.params[0].path, "params.top_p");
  EXPECT_THAT(r.reason, HasSubstr("top_p 0.9 -> 0.8"));
}

TEST(EvidenceDiff, KeptSizeMovingWithSameParamsIsAKeptSetChange) {
  std::vector<StepRecord> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.5}, {21, 0.2}}, 35);
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}}, 36);
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kSample, g)}), make_evidence({make_run("a", kSample, n)})));
  EXPECT_EQ(r.verdict, Verdict::kept_set_change) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("kept set differs at new token 2 (steps[1]) (35 vs 36 tokens)"));
}

TEST(EvidenceDiff, SameDistributionDifferentDrawIsASamplerChange) {
  std::vector<StepRecord> n = greedy_steps();
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}});
  const RunDiff& r =
      only_run(diff_docs(make_evidence({make_run("a", kSample, greedy_steps())}), make_evidence({make_run("a", kSample, n)})));
  EXPECT_EQ(r.verdict, Verdict::sampler_change) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("bit-identical"));
  EXPECT_EQ(r.divergence->step, 1);
}

TEST(EvidenceDiff, SampledTieWithBitIdenticalDistributionIsNotANearTie) {
  // The two tokens are 3e-5 apart, but the distribution did not move at all: only the RNG can
  // have drawn differently.
  std::vector<StepRecord> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.40003}, {21, 0.40000}});
  n[1] = make_step(1, 21, {{20, 0.40003}, {21, 0.40000}});
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kSample, g)}), make_evidence({make_run("a", kSample, n)})));
  EXPECT_EQ(r.verdict, Verdict::sampler_change) << r.reason;
}

TEST(EvidenceDiff, ChangedSeedIsASamplerChange) {
  std::vector<StepRecord> n = greedy_steps();
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}});
  RunRecord nr = make_run("a", kSample, n);
  nr.params.sampling.seed = 43;
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kSample, greedy_steps())}), make_evidence({nr})));
  EXPECT_EQ(r.verdict, Verdict::sampler_change) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("seed 42 -> 43"));
}

TEST(EvidenceDiff, ProbabilitiesBeyondToleranceWithSameTokensAreARegression) {
  std::vector<StepRecord> n = greedy_steps();
  n[0] = make_step(0, 10, {{10, 0.55}, {11, 0.35}});
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kGreedy, greedy_steps())}), make_evidence({make_run("a", kGreedy, n)})));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_EQ(r.first_difference_step, 0);
  EXPECT_FALSE(r.divergence.has_value());
  EXPECT_NEAR(r.max_prob_difference, 0.1, 1e-12);  // the margin moved from 0.3 to 0.2
  ASSERT_FALSE(r.fields.empty());
  EXPECT_EQ(r.fields[0].path, "steps[0].top[id=10].prob_scaled");
}

TEST(EvidenceDiff, RegressionThatFlipsCloseCandidatesIsStillARegression) {
  std::vector<StepRecord> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.40003}, {21, 0.40000}});
  n[1] = make_step(1, 21, {{21, 0.42}, {20, 0.38}});
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kGreedy, g)}), make_evidence({make_run("a", kGreedy, n)})));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_EQ(r.divergence->step, 1);
}

TEST(EvidenceDiff, MissingAndExtraRunsAreReported) {
  const EvidenceDiff d = diff_docs(make_evidence({make_run("a", kGreedy, greedy_steps()), make_run("b", kGreedy, greedy_steps())}),
                                   make_evidence({make_run("b", kGreedy, greedy_steps()), make_run("c", kGreedy, greedy_steps())}));
  EXPECT_FALSE(d.agree());
  EXPECT_EQ(d.missing, std::vector<std::string>{"a"});
  EXPECT_EQ(d.extra, std::vector<std::string>{"c"});
  EXPECT_EQ(d.differing(), 0u);
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("missing run a: in golden, not in the new evidence"));
  EXPECT_THAT(text, HasSubstr("extra run c: in the new evidence, not in golden"));
  EXPECT_THAT(text, HasSubstr("diff: 1 runs compared, 1 agree, 0 differ; 1 missing, 1 extra"));
}

TEST(EvidenceDiff, EnvironmentDifferencesAreListedNotCounted) {
  const Evidence g = make_evidence({make_run("a", kGreedy, greedy_steps())});
  Evidence n = g;
  n.environment.libtorch_version = "2.8.0";
  n.environment.threads.runs_concurrently = 2;  // volatile: ignored
  n.created_utc = "2027-01-01T00:00:00Z";       // volatile: ignored
  n.runs[0].result.seconds = 9.0;               // volatile: ignored
  n.model.path = "/elsewhere";                  // where, not what: ignored
  const EvidenceDiff d = diff_docs(g, n);
  EXPECT_TRUE(d.agree());
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_EQ(d.environment[0].path, "environment.libtorch_version");
  EXPECT_TRUE(d.provenance.empty());
  EXPECT_THAT(format_diff_text(d), HasSubstr("environment differs (likely causes, not failures):\n  environment.libtorch_version: \"1.13.0\" -> \"2.8.0\""));
}

// Strict numerics call neither libtorch nor a BLAS: between two strict files a change there is no
// likely cause (a strict run of the libtorch build loads none of them), while what strict code does
// read (the CPU, the C library through LD_PRELOAD) stays listed; and with reference on either side
// every library is listed, as before.
TEST(EvidenceDiff, BetweenStrictFilesTheLibrariesStrictNeverCallsAreNoLikelyCause) {
  Evidence g = make_evidence({make_run("a", kGreedy, greedy_steps())});
  NumericsRecord strict;
  strict.mode = NumericsMode::strict;
  strict.kernel_revision = "strict-1";
  g.numerics = strict;
  g.environment.blas.vendor = "openblas";
  g.environment.numerics_env = {{"OPENBLAS_CORETYPE", "Haswell"}, {"LD_PRELOAD", std::nullopt}};
  Evidence n = g;
  n.environment.libtorch_version = "none (strict numerics: not loaded)";
  n.environment.torch_config = "";
  n.environment.blas.vendor = "none";
  n.environment.cpu_capability = "none";
  n.environment.threads.intra_op = 7;
  n.environment.numerics_env = {{"OPENBLAS_CORETYPE", std::nullopt}, {"LD_PRELOAD", "/opt/fastmath/libm.so"}};
  n.environment.cpu.model = "Neoverse-N1";
  std::vector<std::string> listed;
  for (const ValueDifference& v : diff_docs(g, n).environment) listed.push_back(v.path);
  EXPECT_EQ(listed, (std::vector<std::string>{"environment.cpu.model", "environment.numerics_env.LD_PRELOAD"}));

  // A run merged from another machine's shard is named by its id, which may hold dots of its own.
  Evidence merged = g;
  merged.runs[0].id = "grid/p0/sample-t0.7-p0.9-s1-7205054c";
  merged.run_environments.push_back({n.environment, {merged.runs[0].index}});
  Evidence golden = g;
  golden.runs[0].id = merged.runs[0].id;
  listed.clear();
  for (const ValueDifference& v : diff_docs(golden, merged).environment) listed.push_back(v.path);
  EXPECT_EQ(listed, (std::vector<std::string>{"environment[run grid/p0/sample-t0.7-p0.9-s1-7205054c].cpu.model",
                                              "environment[run grid/p0/sample-t0.7-p0.9-s1-7205054c].numerics_env.LD_PRELOAD"}));

  Evidence reference = n;
  reference.numerics.reset();  // evidence from before the numerics modes: reference
  listed.clear();
  for (const ValueDifference& v : diff_docs(g, reference).environment) listed.push_back(v.path);
  EXPECT_THAT(listed, ::testing::Contains("environment.libtorch_version"));
  EXPECT_THAT(listed, ::testing::Contains("environment.blas.vendor"));
  EXPECT_THAT(listed, ::testing::Contains("environment.numerics_env.OPENBLAS_CORETYPE"));
  EXPECT_THAT(listed, ::testing::Contains("environment.threads.intra_op"));
}

TEST(EvidenceDiff, ShorterMaxNewTokensIsAParameterChange) {
  std::vector<StepRecord> n = greedy_steps();
  n.pop_back();
  RunRecord nr = make_run("a", kGreedy, n);
  nr.params.max_new_tokens = 2;
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kGreedy, greedy_steps())}), make_evidence({nr})));
  EXPECT_EQ(r.verdict, Verdict::params_change) << r.reason;
  EXPECT_EQ(r.divergence->step, 2);
  EXPECT_FALSE(r.divergence->current.id.has_value());
}

TEST(EvidenceDiff, SameIdsDifferentTextIsARegression) {
  RunRecord nr = make_run("a", kGreedy, greedy_steps());
  nr.text = "the river bank was!";
  const RunDiff& r = only_run(diff_docs(make_evidence({make_run("a", kGreedy, greedy_steps())}), make_evidence({nr})));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("decoded text"));
}

TEST(EvidenceDiff, NonFiniteProbabilityNeverPassesAsWithinTolerance) {
  // evidence.cpp writes NaN as the string "NaN"; NaN - 0.5 is NaN, which a plain "<= tol" test
  // would let through.
  Evidence g = make_evidence({make_run("a", kGreedy, greedy_steps())});
  Evidence n = g;
  n.runs[0].result.steps[0].entropy = std::nan("");
  const RunDiff r = only_run(diff_docs(g, n));
  EXPECT_NE(r.verdict, Verdict::agree);
  EXPECT_EQ(r.first_difference_step, 0);
  ASSERT_FALSE(r.fields.empty());
  EXPECT_EQ(r.fields[0].path, "steps[0].entropy");
  EXPECT_EQ(r.fields[0].current, "NaN") << "a non-finite value is shown as evidence spells it, never as null";
  g.runs[0].result.steps[0].entropy = std::nan("");
  EXPECT_TRUE(diff_docs(g, n).agree());
}

TEST(CacheEquivalence, PairsRunsByIdIgnoresUseCacheAndFailsOnlyOnTokens) {
  // Both passes run one plan: the same ids, use_cache overridden to false and to true.
  const Evidence recompute = make_evidence({make_run("a", kGreedy, greedy_steps()), make_run("b", kSample, greedy_steps())});
  Evidence cached = recompute;
  for (RunRecord& r : cached.runs) r.params.use_cache = true;
  cached.runs[0].result.steps[0].top[1].prob_scaled = 0.3 + 3e-7;  // another matmul shape's rounding
  EvidenceDiff d = diff_cache_equivalence(EvidenceFile{"recompute", recompute}, EvidenceFile{"kv-cache", cached}, {});
  EXPECT_TRUE(d.agree());
  EXPECT_TRUE(tokens_equivalent(d));
  ASSERT_EQ(d.runs.size(), 2u);
  EXPECT_TRUE(d.runs[0].params.empty()) << "use_cache must not be reported as a parameter difference";

  std::vector<StepRecord> flipped = greedy_steps();
  flipped[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}});
  cached.runs[1] = make_run("b", kSample, flipped);
  cached.runs[1].params.use_cache = true;
  d = diff_cache_equivalence(EvidenceFile{"recompute", recompute}, EvidenceFile{"kv-cache", cached}, {});
  EXPECT_FALSE(tokens_equivalent(d));
  ASSERT_TRUE(d.runs[1].divergence.has_value());
  EXPECT_EQ(d.runs[1].divergence->step, 1);
  EXPECT_TRUE(d.runs[1].params.empty());

  cached.runs.pop_back();  // a run one pass lacks is missing, which is never equivalent
  d = diff_cache_equivalence(EvidenceFile{"recompute", recompute}, EvidenceFile{"kv-cache", cached}, {});
  EXPECT_EQ(d.missing, std::vector<std::string>{"b"});
  EXPECT_FALSE(tokens_equivalent(d));
}

TEST(EvidenceDiff, JsonReportHasTheDocumentedShape) {
  const auto [g, n] = near_tie_pair();
  const OrderedJson j = diff_to_json(diff_docs(g, n));
  EXPECT_EQ(j["schema"], "genrepro.diff/1");
  EXPECT_EQ(j["agree"], false);
  EXPECT_EQ(j["summary"]["compared"], 1);
  EXPECT_EQ(j["summary"]["differ"], 1);
  EXPECT_EQ(j["summary"]["verdicts"]["near_tie"], 1);
  const OrderedJson& run = j["runs"][0];
  EXPECT_EQ(run["verdict"], "near_tie");
  EXPECT_EQ(run["divergence"]["step"], 1);
  EXPECT_EQ(run["divergence"]["golden"]["token_id"], 20);
  EXPECT_EQ(run["divergence"]["new"]["token_id"], 21);
  EXPECT_DOUBLE_EQ(run["divergence"]["margin"]["golden"].get<double>(), 0.40003 - 0.40000);
}

TEST(EvidenceDiff, NegativeToleranceIsRejected) {
  const Evidence doc = make_evidence({});
  EXPECT_THROW(
      {
        try {
          diff_docs(doc, doc, -1);
        } catch (const UsageError& e) {
          EXPECT_THAT(e.what(), HasSubstr("--prob-tolerance"));
          throw;
        }
      },
      UsageError);
}

}  // namespace
}  // namespace genrepro
