// The margin that decides a pick (compare/sensitivity.hpp, decisive_margin): the logit margin of a
// greedy step, temperature x the draw's log-ratio margin of a sampled one, nothing where no margin
// decides in logits. Planted runs whose every figure can be checked on paper: a sampled flip at a
// draw margin of 0.004 (T = 0.5: 0.002 in logits) while the step's logit margin is 2, so m* is
// 0.002 and not 2, and the gate labels a sampled divergence by the same margin.
#include "compare/sensitivity.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/fragility.hpp"
#include "report/sensitivity_page.hpp"
#include "support/scratch_dir.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using test::make_evidence;
using test::make_run;
using test::make_step;

constexpr double kT = 0.5;

// Two sampled steps, both with logit margin 2: the first a clear draw (margin 1.5), the second a
// near-tie of the draw (0.004) that the cell takes the other way when `flip`.
RunRecord sampled(bool flip) {
  std::vector<StepRecord> steps = {make_step(0, 10, {{10, 0.6}, {11, 0.4}}, 2), make_step(1, flip ? 21 : 20, {{20, 0.5}, {21, 0.5}}, 2)};
  steps[0].draw = DrawRecord{DrawRule::exponential_race, 1.5, 11};
  steps[1].draw = DrawRecord{DrawRule::exponential_race, 0.004, flip ? 20 : 21};
  for (StepRecord& s : steps) s.logit_margin = 2.0;
  RunRecord r = make_run("s", DecodeMode::sample, steps);
  r.params.sampling.temperature = kT;
  return r;
}

TEST(DecisiveMargin, EachRuleAndWhereNoneDecides) {
  const RunRecord s = sampled(false);
  EXPECT_EQ(decisive_margin(s, s.result.steps[0]), kT * 1.5);
  EXPECT_EQ(decisive_margin(s, s.result.steps[1]), kT * 0.004);
  RunRecord no_draw = s;  // a step that drew nothing in a run that records draws: nothing decides
  no_draw.result.steps[1].draw.reset();
  EXPECT_FALSE(decisive_margin(no_draw, no_draw.result.steps[1]).has_value());
  RunRecord llama = s;  // llama.cpp's inverse-CDF margin is probability mass, not logits
  llama.result.steps[1].draw->rule = DrawRule::inverse_cdf;
  EXPECT_FALSE(decisive_margin(llama, llama.result.steps[1]).has_value());
  RunRecord old = s;  // evidence before draws were recorded: the logit margin, as before
  for (StepRecord& st : old.result.steps) st.draw.reset();
  EXPECT_EQ(decisive_margin(old, old.result.steps[1]), 2.0);
  const RunRecord g = make_run("g", DecodeMode::greedy, {make_step(0, 10, {{10, 0.6}, {11, 0.3}})});
  EXPECT_EQ(decisive_margin(g, g.result.steps[0]), g.result.steps[0].logit_margin);
  StepRecord first_prediction = g.result.steps[0];
  first_prediction.token_id.reset();
  EXPECT_FALSE(decisive_margin(g, first_prediction).has_value());
}

SensitivityMatrix sampled_flip() {
  std::vector<SensitivityCell> cells;
  cells.push_back({"ref", {{"threads", "1"}}, EvidenceFile{"ref.json", make_evidence({sampled(false)})}});
  cells.push_back({"flip", {{"threads", "2"}}, EvidenceFile{"flip.json", make_evidence({sampled(true)})}});
  return build_sensitivity(cells, 0);
}

TEST(DecisiveMargin, TheSampledFlipSetsMStarByItsDrawNotItsLogitMargin) {
  const SensitivityMatrix m = sampled_flip();
  const RunVsReference& r = m.runs[0][1];
  ASSERT_EQ(r.cls, CellClass::diverged);
  EXPECT_EQ(r.reference_decisive_margin, kT * 0.004);
  EXPECT_EQ(r.reference_logit_margin, 2.0);
  const MarginPredictor& p = m.predictor;
  ASSERT_TRUE(p.m_star.has_value());
  EXPECT_EQ(*p.m_star, kT * 0.004);  // by the logit margin it would be 2, and flag every step
  EXPECT_EQ(p.steps, 2u);
  EXPECT_EQ(p.flagged, 1u);
  EXPECT_EQ(p.precision(), 1.0);
  EXPECT_EQ(p.recall(), 1.0);
  EXPECT_EQ(p.steps_not_judged, 0u);
  const OrderedJson j = sensitivity_to_json(m);
  EXPECT_EQ(j["runs"][0]["cells"]["flip"]["reference_decisive_margin"], kT * 0.004);
  EXPECT_EQ(j["predictor"]["flips_not_judged"], 0);
}

TEST(DecisiveMargin, TheHeatmapTooltipOfASampledFlipGivesTheDraw) {
  const std::string html = sensitivity_html(sampled_flip());
  EXPECT_NE(html.find("diverged at new token 2 (logit margin: reference 2, this cell 2; the reference&#39;s draw margin 0.004 "
                      "(runner-up 21); its pick was the reference&#39;s rank 1)"),
            std::string::npos)
      << html.substr(html.find("diverged at"), 300);
}

TEST(DecisiveMargin, AFlipNoMarginDecidesIsCountedButSetsNoMStar) {
  RunRecord ref = sampled(false), cell = sampled(true);
  for (RunRecord* r : {&ref, &cell}) r->result.steps[1].draw->rule = DrawRule::inverse_cdf;
  std::vector<SensitivityCell> cells;
  cells.push_back({"ref", {{"threads", "1"}}, EvidenceFile{"ref.json", make_evidence({ref})}});
  cells.push_back({"flip", {{"threads", "2"}}, EvidenceFile{"flip.json", make_evidence({cell})}});
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  EXPECT_EQ(m.predictor.flips, 1u);
  EXPECT_EQ(m.predictor.flips_not_judged, 1u);
  EXPECT_FALSE(m.predictor.m_star.has_value());
  EXPECT_EQ(m.predictor.steps, 1u);
  EXPECT_EQ(m.predictor.steps_not_judged, 1u);
}

TEST(DecisiveMargin, TheGateLabelsASampledDivergenceByTheSameMargin) {
  const test::ScratchDir dir("decisive");
  const std::string path = dir.write("sensitivity.json", json_document_text(sensitivity_to_json(sampled_flip())));
  const FragilityKnowledge k = read_fragility(path);
  const std::vector<EvidenceFile> golden{EvidenceFile{"golden.json", make_evidence({sampled(false)})}};
  const EvidenceFile current{"new.json", make_evidence({sampled(true)})};
  const EvidenceDiff d = diff_evidence(golden, current, EvidenceDiffOptions{});
  const std::vector<RunFragility> labels = label_divergences(d, golden, current, k);
  ASSERT_EQ(labels.size(), 1u);
  EXPECT_EQ(labels[0].label, FragilityLabel::known_fragile);
  EXPECT_EQ(labels[0].golden_decisive_margin, kT * 0.004);
  EXPECT_EQ(labels[0].why, "temperature x draw margin 0.002 <= m* 0.002; flipped there in 1 of 1 cells");
}

}  // namespace
}  // namespace genrepro
