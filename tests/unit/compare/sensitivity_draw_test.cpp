// The sensitivity matrix's diverged entry with the draws: a sampled run that flips at a
// planted step reports both cells' steps[].draw there (the reference's draw came within 0.004 of
// picking the cell's token, and the cell's within 0.003 of the reference's); a greedy divergence,
// or evidence from before the field, reports null.
#include "compare/sensitivity.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using test::make_evidence;
using test::make_run;
using test::make_step;

SensitivityCell cell(const std::string& name, const std::string& threads, std::vector<RunRecord> runs) {
  return {name, {{"kernels", "portable"}, {"threads", threads}}, EvidenceFile{name + ".json", make_evidence(runs)}};
}

std::vector<StepRecord> sampled(int64_t second_token, const DrawRecord& second_draw) {
  std::vector<StepRecord> steps = {make_step(0, 10, {{10, 0.6}, {11, 0.4}}, 2),
                                   make_step(1, second_token, {{20, 0.5}, {21, 0.5}}, 2)};
  steps[0].draw = DrawRecord{DrawRule::exponential_race, 1.5, 11};
  steps[1].draw = second_draw;
  return steps;
}

TEST(SensitivityDraw, ADivergedSampledRunReportsBothCellsDrawsAtTheStep) {
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("ref", "1", {make_run("s", DecodeMode::sample, sampled(20, {DrawRule::exponential_race, 0.004, 21}))}));
  cells.push_back(cell("flip", "2", {make_run("s", DecodeMode::sample, sampled(21, {DrawRule::exponential_race, 0.003, 20}))}));
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  const RunVsReference& r = m.runs[0][1];
  ASSERT_EQ(r.cls, CellClass::diverged);
  EXPECT_EQ(r.diverged_at, 1);
  ASSERT_TRUE(r.reference_draw && r.cell_draw);
  EXPECT_EQ(r.reference_draw->runner_up, 21);  // the reference's draw nearly picked the cell's token
  EXPECT_EQ(r.cell_draw->margin, 0.003);
  const OrderedJson j = sensitivity_to_json(m);
  const OrderedJson& entry = j["runs"][0]["cells"]["flip"];
  EXPECT_EQ(entry["reference_draw"].dump(), R"({"rule":"exponential_race","margin":0.004,"runner_up":21})");
  EXPECT_EQ(entry["cell_draw"].dump(), R"({"rule":"exponential_race","margin":0.003,"runner_up":20})");
  EXPECT_FALSE(j["runs"][0]["cells"]["ref"].contains("reference_draw"));  // only diverged entries have them
}

TEST(SensitivityDraw, AGreedyDivergenceReportsNull) {
  const std::vector<StepRecord> a = {make_step(0, 10, {{10, 0.6}, {11, 0.3}}), make_step(1, 20, {{20, 0.40}, {21, 0.39}})};
  const std::vector<StepRecord> b = {make_step(0, 10, {{10, 0.6}, {11, 0.3}}), make_step(1, 21, {{21, 0.40}, {20, 0.39}})};
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("ref", "1", {make_run("g", DecodeMode::greedy, a)}));
  cells.push_back(cell("flip", "2", {make_run("g", DecodeMode::greedy, b)}));
  const OrderedJson j = sensitivity_to_json(build_sensitivity(cells, 0));
  const OrderedJson& entry = j["runs"][0]["cells"]["flip"];
  ASSERT_EQ(entry["class"], "diverged");
  EXPECT_TRUE(entry["reference_draw"].is_null());
  EXPECT_TRUE(entry["cell_draw"].is_null());
}

}  // namespace
}  // namespace genrepro
