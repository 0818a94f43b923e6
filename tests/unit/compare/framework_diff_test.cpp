// diff on framework runs: a changed framework, control or stage count is a named
// cause in the text, the JSON, JUnit and the annotations; pairing pairs runs across such a change
// and says what changed. The evidence is the real binary's (tests/data/frameworks/README.md:
// `genrepro run` of two experiment files on the tiny fixture), so every run holds the stages and
// params the engine writes; tampered copies are made here, one field at a time.
#include <algorithm>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/compared_params.hpp"
#include "compare/diff_ci_report.hpp"
#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "compare/run_pairing.hpp"
#include "evidence/evidence.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kData = std::string(GENREPRO_SOURCE_DIR) + "/tests/data/frameworks/";

const EvidenceFile& golden_file() {
  static const EvidenceFile f = read_evidence_file(kData + "golden.json");
  return f;
}
const EvidenceFile& new_file() {
  static const EvidenceFile f = read_evidence_file(kData + "new.json");
  return f;
}

// The run of `e` at `index` (its place in the experiment, as the experiment file lists it).
const RunRecord& run_at(const Evidence& e, int64_t index) {
  for (const RunRecord& r : e.runs)
    if (r.index == index) return r;
  throw std::logic_error("no run with index " + std::to_string(index));
}

EvidenceDiff diff_data() {
  EvidenceDiffOptions o;
  o.pair_by = parse_pair_by(kDefaultPairBy, "--pair-by");
  return diff_evidence({golden_file()}, new_file(), o);
}

const PairedRun& pair_of(const EvidenceDiff& d, const RunRecord& golden) {
  const auto it = std::find_if(d.pairs.begin(), d.pairs.end(), [&](const PairedRun& p) { return p.golden_id == golden.id; });
  if (it == d.pairs.end()) throw std::logic_error("golden run " + golden.id + " is in no pair");
  return *it;
}

TEST(FrameworkDiff, TheDataHoldsWhatTheTestsAreAbout) {
  // If the engine stopped writing stages or framework keys these tests would pass vacuously.
  const Evidence& g = golden_file().evidence;
  ASSERT_EQ(g.runs.size(), 5u);
  EXPECT_EQ(run_at(g, 0).params.sampling.framework, Framework::article);
  EXPECT_TRUE(run_at(g, 0).result.steps[0].stages.empty());
  EXPECT_EQ(run_at(g, 1).params.sampling.framework, Framework::hf);
  EXPECT_EQ(run_at(g, 2).params.sampling.framework, Framework::llama_cpp);
  for (int64_t i = 1; i < 5; ++i) {
    const RunRecord& r = run_at(g, i);
    ASSERT_EQ(r.result.steps.size(), 6u) << r.id;
    EXPECT_FALSE(r.result.steps[0].stages.empty()) << r.id << " lists no stages";
  }
}

TEST(FrameworkDiff, EachChangedFrameworkKeyIsASamplerChangeNamingIt) {
  const EvidenceDiff d = diff_data();
  // Runs 3 and 4 are the same in both files (same ids): they agree, stage counts included.
  EXPECT_EQ(d.runs.size(), 2u);
  EXPECT_EQ(d.differing(), 0u) << format_diff_text(d);
  ASSERT_EQ(d.pairs.size(), 3u) << format_diff_text(d);
  EXPECT_TRUE(d.missing.empty());
  EXPECT_TRUE(d.extra.empty());
  EXPECT_FALSE(d.agree());

  const Evidence& g = golden_file().evidence;
  const PairedRun& article_to_llama = pair_of(d, run_at(g, 0));
  EXPECT_EQ(article_to_llama.diff.verdict, Verdict::sampler_change);
  // The framework first; what llama.cpp's preset turns on besides it (min_p 0.05) with it; the
  // article keys its preset sets (top_k 40, rng) after "also".
  EXPECT_THAT(article_to_llama.diff.reason, HasSubstr("the sampler chain's parameters differ (framework \"article\" -> \"llama.cpp\", min_p 0.0 -> 0.05; also "));
  EXPECT_THAT(article_to_llama.diff.reason, HasSubstr("top_k 0 -> 40"));
  EXPECT_THAT(article_to_llama.diff.reason, HasSubstr("rng \"torch\" -> \"llama.cpp\""));
  // Keys llama.cpp has at their off value (repeat_penalty 1, top_n_sigma -1, ...) are no change.
  EXPECT_THAT(article_to_llama.change, Not(HasSubstr("repeat_penalty")));
  EXPECT_THAT(article_to_llama.change, Not(HasSubstr("top_n_sigma -1")));
  EXPECT_THAT(article_to_llama.change, Not(HasSubstr("dynatemp")));
  // The framework is the first change a reader sees.
  EXPECT_EQ(article_to_llama.change.rfind("framework \"article\" \u2192 \"llama.cpp\", ", 0), 0u) << article_to_llama.change;
  EXPECT_THAT(pair_verdict(article_to_llama), HasSubstr("parameter change: "));
  EXPECT_THAT(pair_verdict(article_to_llama), HasSubstr("framework \"article\" \u2192 \"llama.cpp\""));

  const PairedRun& penalty = pair_of(d, run_at(g, 1));
  EXPECT_EQ(pair_verdict(penalty), "parameter change: repetition_penalty 1.0 \u2192 1.3");
  EXPECT_EQ(penalty.diff.verdict, Verdict::sampler_change);
  EXPECT_EQ(penalty.diff.reason, "the sampler chain's parameters differ (repetition_penalty 1.0 -> 1.3)");

  const PairedRun& min_p = pair_of(d, run_at(g, 2));
  EXPECT_EQ(pair_verdict(min_p), "parameter change: min_p 0.05 \u2192 0.1");
  EXPECT_EQ(min_p.diff.reason, "the sampler chain's parameters differ (min_p 0.05 -> 0.1)");
  ASSERT_EQ(min_p.diff.params.size(), 1u);
  EXPECT_EQ(min_p.diff.params[0].path, "params.min_p");
  ASSERT_TRUE(min_p.diff.params[0].abs_diff.has_value());
  EXPECT_NEAR(*min_p.diff.params[0].abs_diff, 0.05, 1e-12);
}

TEST(FrameworkDiff, EveryOutputNamesTheChange) {
  const EvidenceDiff d = diff_data();
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("parameter change: repetition_penalty 1.0 \u2192 1.3 (1 pair"));
  EXPECT_THAT(text, HasSubstr("parameter change: min_p 0.05 \u2192 0.1 (1 pair"));
  EXPECT_THAT(text, HasSubstr("sampler/RNG change"));
  const std::string brief = format_diff_brief(d);
  EXPECT_THAT(brief, HasSubstr("parameter change: repetition_penalty 1.0 \u2192 1.3"));

  const OrderedJson j = diff_to_json(d);
  bool found = false;
  for (const OrderedJson& p : j["pairs"]) {
    if (p["verdict"] != "parameter change: min_p 0.05 \u2192 0.1") continue;
    found = true;
    EXPECT_EQ(p["cause"], "sampler_change");
    EXPECT_EQ(p["change"][0]["path"], "params.min_p");
    EXPECT_EQ(p["change"][0]["golden"], 0.05);
    EXPECT_EQ(p["change"][0]["new"], 0.1);
    EXPECT_THAT(p["reason"].get<std::string>(), HasSubstr("min_p 0.05 -> 0.1"));
  }
  EXPECT_TRUE(found) << j.dump(2);

  const std::string junit = diff_to_junit(d);
  EXPECT_THAT(junit, HasSubstr("type=\"paired\""));
  EXPECT_THAT(junit, HasSubstr("parameter change: framework &quot;article&quot; \u2192 &quot;llama.cpp&quot;"));
  const std::string annotations = diff_to_github_annotations(d);
  EXPECT_THAT(annotations, HasSubstr("::error "));
  EXPECT_THAT(annotations, HasSubstr("parameter change: repetition_penalty 1.0 \u2192 1.3"));
}

// Matched by id (the same params), one step's stage count moved: the stage is named.
TEST(FrameworkDiff, AStageCountThatMovesWithTheSameParamsNamesTheStage) {
  EvidenceFile tampered = golden_file();
  RunRecord& r = const_cast<RunRecord&>(run_at(tampered.evidence, 2));  // llama.cpp, min_p 0.05
  StepRecord& s = r.result.steps[3];
  ASSERT_GE(s.stages.size(), 2u);
  // The min_p stage (and what follows it) keeps one token more, the final kept with it.
  std::size_t min_p = 0;
  while (min_p < s.stages.size() && s.stages[min_p].stage != "min_p") ++min_p;
  ASSERT_LT(min_p, s.stages.size()) << "no min_p stage";
  for (std::size_t i = min_p; i < s.stages.size(); ++i) ++s.stages[i].kept;
  ++s.kept;
  const EvidenceDiff d = diff_evidence({golden_file()}, tampered, {});
  const RunDiff& rd = *std::find_if(d.runs.begin(), d.runs.end(), [&](const RunDiff& x) { return x.id == r.id; });
  EXPECT_EQ(rd.verdict, Verdict::kept_set_change);
  EXPECT_THAT(rd.reason, HasSubstr("at new token 4 (steps[3]) (stage min_p: "));
  EXPECT_THAT(rd.reason, HasSubstr("the min_p stage's boundary moved"));
  EXPECT_EQ(rd.cause, "the kept set differs with the same parameters: the min_p stage's boundary moved");
  const auto path = "steps[3].stages[" + std::to_string(min_p) + "].kept";
  EXPECT_TRUE(std::any_of(rd.fields.begin(), rd.fields.end(), [&](const ValueDifference& f) { return f.path == path; }))
      << format_diff_text(d);
  EXPECT_THAT(run_difference_line(rd), HasSubstr("the min_p stage's boundary moved"));
}

// A stage count is compared even when the final kept size agrees (min_p cut one token that a
// later stage would have cut anyway): diff must not call the runs equal.
TEST(FrameworkDiff, AStageCountAloneIsADifference) {
  EvidenceFile tampered = golden_file();
  RunRecord& r = const_cast<RunRecord&>(run_at(tampered.evidence, 4));  // llama.cpp penalties
  StepRecord& s = r.result.steps[0];
  ASSERT_GE(s.stages.size(), 2u);
  ASSERT_EQ(s.stages[0].stage, "penalties");
  --s.stages[0].kept;  // still >= every later count: a file the reader would accept
  const EvidenceDiff d = diff_evidence({golden_file()}, tampered, {});
  const RunDiff& rd = *std::find_if(d.runs.begin(), d.runs.end(), [&](const RunDiff& x) { return x.id == r.id; });
  EXPECT_EQ(rd.verdict, Verdict::kept_set_change) << rd.reason;
  EXPECT_THAT(rd.reason, HasSubstr("stage penalties: "));
  ASSERT_TRUE(rd.first_difference_step.has_value());
  EXPECT_EQ(*rd.first_difference_step, 0);
}

// Hugging Face's greedy takes the argmax of the processed scores, whose softmax is the step's
// final distribution: two tokens tied there are a near-tie even when their unfiltered
// probabilities are far apart (as n-gram bans and penalties make them).
TEST(FrameworkDiff, HuggingFaceGreedyTokensCompeteInTheProcessedDistribution) {
  EvidenceFile golden = golden_file();
  RunRecord& g = const_cast<RunRecord&>(run_at(golden.evidence, 3));  // hf greedy, no_repeat_ngram_size 2
  ASSERT_EQ(g.params.sampling.mode, DecodeMode::greedy);
  StepRecord& gs = g.result.steps[2];
  ASSERT_EQ(gs.top[0].id, *gs.token_id) << "the processed argmax is the unfiltered one here";
  ASSERT_GT(gs.top[0].prob_scaled - gs.top[1].prob_scaled, 1e-3) << "not a near-tie in the unfiltered distribution";
  gs.top[1].prob = gs.top[0].prob - 1e-6;  // a near-tie in the processed one
  EvidenceFile current = golden;
  RunRecord& n = const_cast<RunRecord&>(run_at(current.evidence, 3));
  StepRecord& ns = n.result.steps[2];
  ns.token_id = ns.top[1].id;  // the other side of the tie
  ns.token_text = ns.top[1].text;
  ns.prob = ns.top[1].prob;
  n.result.output_ids[2] = ns.top[1].id;
  const RunDiff d = diff_run(g, n, kDefaultProbTolerance);
  EXPECT_EQ(d.verdict, Verdict::near_tie) << d.reason;
  ASSERT_TRUE(d.divergence.has_value());
  ASSERT_TRUE(d.divergence->current.prob_in_golden.has_value());
  EXPECT_EQ(*d.divergence->current.prob_in_golden, gs.top[1].prob) << "the processed probability, not prob_scaled";
}

// The same run under another framework's keys: compared_params gives every run every key, so
// a key the other framework lacks compares as its off value and is no change.
TEST(FrameworkDiff, KeysAFrameworkLacksCompareAsTheirOffValue) {
  const RunRecord& hf = run_at(golden_file().evidence, 1);
  const OrderedJson p = compared_params(hf.params);
  EXPECT_EQ(p["framework"], "hf");
  EXPECT_EQ(p["repeat_penalty"], 1.0);  // llama.cpp's, off
  EXPECT_EQ(p["top_k"], 20);
  const OrderedJson a = compared_params(run_at(golden_file().evidence, 0).params);
  EXPECT_EQ(a["framework"], "article");
  EXPECT_EQ(a["min_p"], 0.0);
  EXPECT_EQ(compared_param_keys().size(), p.size());
  std::vector<std::string> keys;
  for (auto it = p.begin(); it != p.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, compared_param_keys()) << "every run lists the keys in the same order";
}

TEST(FrameworkDiff, PairByTakesFrameworkKeys) {
  const std::vector<std::string> keys = parse_pair_by("experiment,prompt,framework,seed", "--pair-by");
  EXPECT_EQ(keys.back(), "seed");
  EXPECT_NO_THROW(parse_pair_by("experiment,min_p,repetition_penalty", "--pair-by"));
  try {
    parse_pair_by("experiment,min-p", "--pair-by");
    FAIL() << "min-p is no key";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown key \"min-p\""));
    EXPECT_THAT(e.what(), HasSubstr("min_p"));
  }
  // Unmatched by id: golden runs 0 (article), 1 (hf), 2 (llama.cpp min_p 0.05); new runs 0
  // (llama.cpp, its preset's min_p 0.05), 1 (hf), 2 (llama.cpp min_p 0.1); all seed 7.
  std::vector<const RunRecord*> g, n;
  for (const RunRecord& r : golden_file().evidence.runs) g.push_back(&r);
  for (const RunRecord& r : new_file().evidence.runs) n.push_back(&r);
  // By framework: the new file's two llama.cpp runs share it, so neither pairs; hf pairs with hf.
  const std::vector<RunPair> by_framework = pair_runs(g, n, parse_pair_by("experiment,framework,seed", "--pair-by"));
  ASSERT_EQ(by_framework.size(), 1u);
  EXPECT_EQ(by_framework[0].golden->index, 1);
  EXPECT_EQ(by_framework[0].current->index, 1);
  // By min_p: the article run's (off, 0) is hf's too, so those two pair with nothing; the golden
  // llama.cpp run's 0.05 is the value the new article-turned-llama.cpp run got from its preset.
  const std::vector<RunPair> by_min_p = pair_runs(g, n, parse_pair_by("experiment,min_p,seed", "--pair-by"));
  ASSERT_EQ(by_min_p.size(), 1u);
  EXPECT_EQ(by_min_p[0].golden->index, 2);
  EXPECT_EQ(by_min_p[0].current->index, 0);
}

}  // namespace
}  // namespace genrepro
