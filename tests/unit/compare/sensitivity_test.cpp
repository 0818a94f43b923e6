// The sensitivity matrix on hand-made cells whose differences are planted at known steps, so every
// class, new-token number, margin, rank and predictor figure below can be checked on paper.
#include "compare/sensitivity.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;

constexpr DecodeMode kGreedy = DecodeMode::greedy;

SensitivityCell cell(const std::string& name, const std::string& threads, std::vector<RunRecord> runs) {
  return {name, {{"kernels", "portable"}, {"threads", threads}}, EvidenceFile{name + ".json", make_evidence(runs)}};
}

// Run "b": step 1 is a near-tie in the reference (0.40 vs 0.39), the step planted to flip.
std::vector<StepRecord> near_tie_steps() {
  return {make_step(0, 10, {{10, 0.6}, {11, 0.3}}), make_step(1, 20, {{20, 0.40}, {21, 0.39}}),
          make_step(2, 30, {{30, 0.7}, {31, 0.2}})};
}

SensitivityMatrix planted() {
  const RunRecord a = make_run("a", kGreedy, greedy_steps());
  const RunRecord b = make_run("b", kGreedy, near_tie_steps());
  // Same tokens, one candidate's probability 1e-7 away: different bits.
  std::vector<StepRecord> nudged = greedy_steps();
  nudged[2].top[1].prob += 1e-7;
  nudged[2].top[1].prob_scaled += 1e-7;
  nudged[2].logit_margin += 1e-6;
  // b flips at step 1 (new token 2) to the reference's runner-up.
  std::vector<StepRecord> flipped = near_tie_steps();
  flipped[1] = make_step(1, 21, {{21, 0.395}, {20, 0.394}});
  flipped[2] = make_step(2, 35, {{35, 0.5}, {36, 0.1}});
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("ref", "1", {a, b}));
  cells.push_back(cell("same", "2", {a, b}));
  cells.push_back(cell("bits", "3", {make_run("a", kGreedy, nudged), b}));
  SensitivityCell mixed = cell("flip", "4", {a, make_run("b", kGreedy, flipped)});
  mixed.axes["numerics"] = "tiled";  // two axes changed: not a one-factor cell
  cells.push_back(mixed);
  cells.push_back(cell("partial", "5", {b}));
  return build_sensitivity(cells, 0);
}

TEST(Sensitivity, EveryClassAtThePlantedStep) {
  const SensitivityMatrix m = planted();
  ASSERT_EQ(m.run_ids, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m.runs[0][0].cls, CellClass::identical);
  EXPECT_EQ(m.runs[0][1].cls, CellClass::identical);
  EXPECT_EQ(m.runs[0][2].cls, CellClass::same_tokens);
  EXPECT_NEAR(m.runs[0][2].max_prob_delta, 1e-7, 1e-12);
  EXPECT_EQ(m.runs[1][2].cls, CellClass::identical);
  const RunVsReference& f = m.runs[1][3];
  EXPECT_EQ(f.cls, CellClass::diverged);
  EXPECT_EQ(f.diverged_at, 1);  // new token 2
  EXPECT_NEAR(f.reference_margin, 0.01, 1e-12);
  EXPECT_NEAR(f.reference_logit_margin, std::log(0.40 / 0.39), 1e-12);
  ASSERT_TRUE(f.rank_in_reference.has_value());
  EXPECT_EQ(*f.rank_in_reference, 1);  // the reference's runner-up
  EXPECT_EQ(m.runs[0][4].cls, CellClass::missing);
  EXPECT_EQ(m.runs[1][4].cls, CellClass::identical);
}

TEST(Sensitivity, SummariesSurvivalAndOneFactorAttribution) {
  const SensitivityMatrix m = planted();
  EXPECT_EQ(m.summaries[2].same_tokens, 1u);
  EXPECT_EQ(m.summaries[3].diverged, 1u);
  EXPECT_EQ(m.summaries[4].missing, 1u);
  // The flip cell: both runs agree on their first new token, one of two after the second.
  ASSERT_EQ(m.summaries[3].survival.size(), 4u);
  EXPECT_DOUBLE_EQ(m.summaries[3].survival[0], 1.0);
  EXPECT_DOUBLE_EQ(m.summaries[3].survival[1], 1.0);
  EXPECT_DOUBLE_EQ(m.summaries[3].survival[2], 0.5);
  // "flip" changed two axes: attribution lists only the one-axis cells.
  ASSERT_EQ(m.attribution.size(), 3u);
  for (const AxisEffect& e : m.attribution) {
    EXPECT_EQ(e.axis, "threads");
    EXPECT_NE(e.cell, "flip");
  }
}

TEST(Sensitivity, TheMarginPredictorIsFittedToTheFlips) {
  const MarginPredictor& p = planted().predictor;
  EXPECT_EQ(p.flips, 1u);
  ASSERT_TRUE(p.m_star.has_value());
  EXPECT_NEAR(*p.m_star, std::log(0.40 / 0.39), 1e-12);
  // Six reference steps; only the planted near-tie has a logit margin that small.
  EXPECT_EQ(p.steps, 6u);
  EXPECT_EQ(p.flagged, 1u);
  EXPECT_DOUBLE_EQ(p.recall(), 1.0);
  EXPECT_DOUBLE_EQ(p.precision(), 1.0);
  EXPECT_NEAR(p.noise_floor, 1e-6, 1e-12);  // the nudged cell's logit margin, on a matched step
}

TEST(Sensitivity, NoFlipMeansNoThreshold) {
  const RunRecord a = make_run("a", kGreedy, greedy_steps());
  const SensitivityMatrix m = build_sensitivity({cell("ref", "1", {a}), cell("same", "2", {a})}, 0);
  EXPECT_FALSE(m.predictor.m_star.has_value());
  EXPECT_EQ(m.predictor.flagged, 0u);
  const OrderedJson j = sensitivity_to_json(m);
  EXPECT_TRUE(j["predictor"]["m_star"].is_null());
  EXPECT_EQ(j["cells"][1]["runs"]["identical"], 1);
  EXPECT_NE(sensitivity_markdown(m).find("No run diverged in any cell"), std::string::npos);
}

// ---- the per-step logits digests: "identical" is proven only where both cells have them ----

std::vector<StepRecord> with_digests(std::vector<StepRecord> steps, const std::string& last_digit_of_step_1) {
  for (std::size_t k = 0; k < steps.size(); ++k) steps[k].logits_digest = "xxh64:00000000000000" + std::string("0") + std::to_string(k);
  steps[1].logits_digest = "xxh64:00000000000000" + last_digit_of_step_1 + "1";
  return steps;
}

TEST(SensitivityLogits, DigestsDecideIdenticalWhereTheRecordedValuesCannot) {
  const RunRecord ref = make_run("a", kGreedy, with_digests(greedy_steps(), "0"));
  // Every recorded value equal to the reference's; only step 1's logits digest differs: the logits
  // differ below the listed candidates.
  const RunRecord below = make_run("a", kGreedy, with_digests(greedy_steps(), "f"));
  const RunRecord same = make_run("a", kGreedy, with_digests(greedy_steps(), "0"));
  const RunRecord unrecorded = make_run("a", kGreedy, greedy_steps());  // evidence from before the digests
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("ref", "1", {ref}));
  cells.push_back(cell("same", "2", {same}));
  cells.push_back(cell("below", "3", {below}));
  cells.push_back(cell("old", "4", {unrecorded}));
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  EXPECT_EQ(m.runs[0][1].cls, CellClass::identical);
  EXPECT_EQ(m.runs[0][1].logits, LogitsCheck::equal);
  EXPECT_EQ(m.runs[0][2].cls, CellClass::same_tokens);
  EXPECT_EQ(m.runs[0][2].logits, LogitsCheck::differ);
  EXPECT_EQ(m.runs[0][2].max_prob_delta, 0);  // nothing recorded shows it: only the digest does
  EXPECT_EQ(m.runs[0][3].cls, CellClass::identical);
  EXPECT_EQ(m.runs[0][3].logits, LogitsCheck::not_recorded);
  EXPECT_EQ(m.summaries[1].identical_logits_equal, 1u);
  EXPECT_EQ(m.summaries[3].identical, 1u);
  EXPECT_EQ(m.summaries[3].identical_logits_equal, 0u);
  const OrderedJson j = sensitivity_to_json(m);
  EXPECT_EQ(j["runs"][0]["cells"]["below"]["logits"], "differ");
  EXPECT_EQ(j["runs"][0]["cells"]["same"]["logits"], "equal");
  EXPECT_EQ(j["runs"][0]["cells"]["old"]["logits"], "not_recorded");
  EXPECT_EQ(j["cells"][1]["runs"]["identical_logits_equal"], 1);
}

TEST(SensitivityLogits, ADigestOfAnotherAlgorithmIsNotCompared) {
  std::vector<StepRecord> other = with_digests(greedy_steps(), "f");
  for (StepRecord& s : other) s.logits_digest = "sha256:" + std::string(64, 'a');
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("ref", "1", {make_run("a", kGreedy, with_digests(greedy_steps(), "0"))}));
  cells.push_back(cell("sha", "2", {make_run("a", kGreedy, other)}));
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  EXPECT_EQ(m.runs[0][1].cls, CellClass::identical);  // every recorded value equal
  EXPECT_EQ(m.runs[0][1].logits, LogitsCheck::not_recorded);
}

}  // namespace
}  // namespace genrepro
