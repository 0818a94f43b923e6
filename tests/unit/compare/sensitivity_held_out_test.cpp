// The margin predictor on held-out cells (leave one cell out), on a matrix whose flips are planted
// at known steps with known margins, so every figure below is worked out by hand in the table:
//
// reference runs, logit margin ln(p1/p2) of each step:
//   p: s0 ln(0.50/0.45) = 0.1054  s1 ln(0.6/0.2) = 1.099  s2 ln(0.40/0.39) = 0.0253  s3 ln(0.7/0.1) = 1.946
//   q: s0 ln(0.90/0.05) = 2.890   s1 ln(0.34/0.33) = 0.0299  s2 ln(0.8/0.1) = 2.079
// cells: X (p flips at s2), Y (p flips at s0, q at s1), Z (nothing flips).
// Fitted on all cells: m* = 0.1054 (Y's p), flagged p s0, p s2, q s1: precision 1, recall 1.
// Held out (a diverged run is judged on the reference's steps up to its divergence):
//   X: m* from Y = 0.1054; steps p s0-s2 + q s0-s2 = 6; flagged p s0, p s2, q s1 = 3;
//      flips 1 (p s2, 0.0253 <= 0.1054: caught); recall 1, precision 1/3, share 1/2.
//   Y: m* from X = 0.0253; steps p s0 + q s0-s1 = 3; flagged none (0.1054, 2.890, 0.0299 > 0.0253);
//      flips 2, caught 0; recall 0, precision none, share 0.
//   Z: m* from X and Y = 0.1054; steps 7; flagged 3; flips 0: recall none, precision 0, share 3/7.
//   overall: 1 of 3 flips caught, held-out recall 1/3 (against 1 on the training cells).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/sensitivity.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using test::make_evidence;
using test::make_run;
using test::make_step;

std::vector<StepRecord> p_steps() {
  return {make_step(0, 10, {{10, 0.50}, {11, 0.45}}), make_step(1, 20, {{20, 0.6}, {21, 0.2}}),
          make_step(2, 30, {{30, 0.40}, {31, 0.39}}), make_step(3, 40, {{40, 0.7}, {41, 0.1}})};
}

std::vector<StepRecord> q_steps() {
  return {make_step(0, 50, {{50, 0.90}, {51, 0.05}}), make_step(1, 60, {{60, 0.34}, {61, 0.33}}),
          make_step(2, 70, {{70, 0.8}, {71, 0.1}})};
}

// `steps` with its runner-up picked at step k and something else after.
std::vector<StepRecord> flipped_at(std::vector<StepRecord> steps, std::size_t k) {
  const int64_t second = steps[k].top[1].id, first = steps[k].top[0].id;
  steps[k] = make_step(static_cast<int64_t>(k), second, {{second, 0.5}, {first, 0.4}});
  for (std::size_t j = k + 1; j < steps.size(); ++j) steps[j] = make_step(static_cast<int64_t>(j), 90 + int64_t(j), {{90 + int64_t(j), 0.9}, {99, 0.05}});
  return steps;
}

SensitivityCell held_cell(const std::string& name, std::vector<RunRecord> runs) {
  return {name, {{"threads", name}}, EvidenceFile{name + ".json", make_evidence(runs)}};
}

SensitivityMatrix planted_two_flipping_cells() {
  const RunRecord p = make_run("p", DecodeMode::greedy, p_steps());
  const RunRecord q = make_run("q", DecodeMode::greedy, q_steps());
  std::vector<SensitivityCell> cells;
  cells.push_back(held_cell("ref", {p, q}));
  cells.push_back(held_cell("X", {make_run("p", DecodeMode::greedy, flipped_at(p_steps(), 2)), q}));
  cells.push_back(held_cell("Y", {make_run("p", DecodeMode::greedy, flipped_at(p_steps(), 0)),
                                  make_run("q", DecodeMode::greedy, flipped_at(q_steps(), 1))}));
  cells.push_back(held_cell("Z", {p, q}));
  return build_sensitivity(cells, 0);
}

TEST(SensitivityHeldOut, TrainingFitHasRecallOneOnThePlantedFlips) {
  const SensitivityMatrix m = planted_two_flipping_cells();
  ASSERT_TRUE(m.predictor.m_star.has_value());
  EXPECT_NEAR(*m.predictor.m_star, std::log(0.50 / 0.45), 1e-12);
  EXPECT_EQ(m.predictor.flips, 3u);
  EXPECT_EQ(m.predictor.steps, 7u);
  EXPECT_EQ(m.predictor.flagged, 3u);
  EXPECT_DOUBLE_EQ(m.predictor.recall(), 1.0);
  EXPECT_DOUBLE_EQ(m.predictor.precision(), 1.0);
}

TEST(SensitivityHeldOut, EachCellJudgedWithMStarFittedWithoutIt) {
  const SensitivityMatrix m = planted_two_flipping_cells();
  const HeldOutPredictor& h = m.held_out;
  ASSERT_EQ(h.cells.size(), 3u);  // X, Y, Z: the reference is never held out
  const HeldOutCell& x = h.cells[0];
  EXPECT_EQ(x.cell, "X");
  ASSERT_TRUE(x.m_star.has_value());
  EXPECT_NEAR(*x.m_star, std::log(0.50 / 0.45), 1e-12);
  EXPECT_EQ(x.steps, 6u);
  EXPECT_EQ(x.flagged, 3u);
  EXPECT_EQ(x.flips, 1u);
  EXPECT_EQ(x.caught, 1u);
  EXPECT_DOUBLE_EQ(*x.recall(), 1.0);
  EXPECT_DOUBLE_EQ(*x.precision(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(x.share_flagged(), 0.5);

  const HeldOutCell& y = h.cells[1];
  EXPECT_EQ(y.cell, "Y");
  ASSERT_TRUE(y.m_star.has_value());
  EXPECT_NEAR(*y.m_star, std::log(0.40 / 0.39), 1e-12);
  EXPECT_EQ(y.steps, 3u);
  EXPECT_EQ(y.flagged, 0u);
  EXPECT_EQ(y.flips, 2u);
  EXPECT_EQ(y.caught, 0u);
  EXPECT_DOUBLE_EQ(*y.recall(), 0.0);
  EXPECT_FALSE(y.precision().has_value());
  EXPECT_DOUBLE_EQ(y.share_flagged(), 0.0);

  const HeldOutCell& z = h.cells[2];
  EXPECT_EQ(z.cell, "Z");
  EXPECT_NEAR(*z.m_star, std::log(0.50 / 0.45), 1e-12);
  EXPECT_EQ(z.steps, 7u);
  EXPECT_EQ(z.flagged, 3u);
  EXPECT_EQ(z.flips, 0u);
  EXPECT_FALSE(z.recall().has_value());
  EXPECT_DOUBLE_EQ(*z.precision(), 0.0);
  EXPECT_DOUBLE_EQ(z.share_flagged(), 3.0 / 7);

  EXPECT_EQ(h.cells_with_flips, 2u);
  EXPECT_TRUE(h.enough());
  EXPECT_EQ(h.flips, 3u);
  EXPECT_EQ(h.caught, 1u);
  EXPECT_DOUBLE_EQ(*h.recall(), 1.0 / 3);
}

TEST(SensitivityHeldOut, WrittenToJsonAndMarkdown) {
  const SensitivityMatrix m = planted_two_flipping_cells();
  const OrderedJson j = sensitivity_to_json(m);
  const OrderedJson& h = j.at("held_out_predictor");
  EXPECT_EQ(h.at("cells_with_flips"), 2);
  EXPECT_EQ(h.at("enough_cells"), true);
  EXPECT_EQ(h.at("flips"), 3);
  EXPECT_EQ(h.at("caught"), 1);
  EXPECT_DOUBLE_EQ(h.at("recall").get<double>(), 1.0 / 3);
  ASSERT_EQ(h.at("cells").size(), 3u);
  EXPECT_EQ(h.at("cells")[1].at("cell"), "Y");
  EXPECT_TRUE(h.at("cells")[1].at("precision").is_null());
  EXPECT_EQ(h.at("cells")[2].at("recall"), nullptr);
  const std::string md = sensitivity_markdown(m);
  EXPECT_NE(md.find("caught 1 of 3 flips: held-out recall 0.333, against 1 on the cells it was fitted to"), std::string::npos) << md;
  EXPECT_NE(md.find("| Y | 0.0253 | 2 | 0 | 0 | 0 of 3 (0.0 %) | - |"), std::string::npos) << md;
  EXPECT_NE(md.find("| X | 0.105 | 1 | 1 | 1 | 3 of 6 (50.0 %) | 0.333 |"), std::string::npos) << md;
}

TEST(SensitivityHeldOut, OneCellWithFlipsIsNotEnoughToHoldOneOut) {
  const RunRecord p = make_run("p", DecodeMode::greedy, p_steps());
  std::vector<SensitivityCell> cells;
  cells.push_back(held_cell("ref", {p}));
  cells.push_back(held_cell("X", {make_run("p", DecodeMode::greedy, flipped_at(p_steps(), 2))}));
  cells.push_back(held_cell("Z", {p}));
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  EXPECT_DOUBLE_EQ(m.predictor.recall(), 1.0);  // fitted on its one flip
  EXPECT_EQ(m.held_out.cells_with_flips, 1u);
  EXPECT_FALSE(m.held_out.enough());
  EXPECT_FALSE(m.held_out.recall().has_value());
  // X held out: no other cell flipped, so there is no m* to judge it with.
  EXPECT_FALSE(m.held_out.cells[0].m_star.has_value());
  EXPECT_TRUE(sensitivity_to_json(m).at("held_out_predictor").at("recall").is_null());
  const std::string md = sensitivity_markdown(m);
  EXPECT_NE(md.find("1 cell has flips: not enough cells to hold one out"), std::string::npos) << md;
  EXPECT_EQ(md.find("| held-out cell |"), std::string::npos) << md;
}

}  // namespace
}  // namespace genrepro
