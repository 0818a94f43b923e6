// The sensitivity page labels runs and cells as the rest of the report does: rows by the
// parameter table's run label, the survival legend with the heatmap's column labels; and
// survival lines that coincide are dashed apart and named, so none hides another.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/sensitivity_page.hpp"
#include "unit/compare/planted_flip.hpp"

namespace genrepro {
namespace {

using test::b_flipped;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::near_tie_steps;

RunRecord sampled(const std::string& id, uint64_t seed) {
  RunRecord r = make_run(id, DecodeMode::sample, greedy_steps(), "temps");
  r.params.sampling.temperature = 0.7;
  r.params.sampling.top_p = 0.9;
  r.params.sampling.seed = seed;
  return r;
}

SensitivityMatrix matrix() {
  const std::vector<RunRecord> runs = {sampled("temps/p0/s1", 1), sampled("temps/p0/s2", 2),
                                       make_run("temps/p0/b", DecodeMode::greedy, near_tie_steps(), "temps")};
  std::vector<RunRecord> flipped = runs;
  flipped[2] = make_run("temps/p0/b", DecodeMode::greedy, b_flipped(), "temps");
  std::vector<SensitivityCell> cells;
  cells.push_back({"kernels-portable_threads-1_numerics-reference_batch-1", {{"threads", "1"}}, EvidenceFile{"r.json", make_evidence(runs)}});
  cells.push_back({"kernels-portable_threads-2_numerics-reference_batch-1", {{"threads", "2"}}, EvidenceFile{"t.json", make_evidence(runs)}});
  cells.push_back({"kernels-portable_threads-3_numerics-reference_batch-1", {{"threads", "3"}}, EvidenceFile{"u.json", make_evidence(runs)}});
  cells.push_back({"kernels-portable_threads-4_numerics-reference_batch-1", {{"threads", "4"}}, EvidenceFile{"f.json", make_evidence(flipped)}});
  return build_sensitivity(cells, 0);
}

TEST(SensitivityPageLabels, RowsAreRunLabelsAndTheLegendIsTheHeatmapsColumns) {
  const SensitivityMatrix m = matrix();
  const HeatmapSpec h = sensitivity_heatmap(m);
  EXPECT_EQ(h.rows, (std::vector<std::string>{"p0 T=0.7 top_p=0.9 seed=1", "p0 T=0.7 top_p=0.9 seed=2", "p0 greedy"}));
  EXPECT_EQ(h.columns, (std::vector<std::string>{"reference", "threads=2", "threads=3", "threads=4"}));
  const LineChartSpec chart = sensitivity_survival_chart(m);
  ASSERT_EQ(chart.series.size(), 4u);
  for (std::size_t c = 0; c < chart.series.size(); ++c) EXPECT_EQ(chart.series[c].label, h.columns[c]) << c;
}

TEST(SensitivityPageLabels, CoincidingSurvivalLinesAreDashedApartAndNamed) {
  const SensitivityMatrix m = matrix();
  // The reference, threads=2 and threads=3 never diverge: one line, three times.
  const std::vector<std::vector<std::size_t>> groups = coinciding_survival_lines(m);
  ASSERT_EQ(groups, (std::vector<std::vector<std::size_t>>{{0, 1, 2}}));
  const LineChartSpec chart = sensitivity_survival_chart(m);
  EXPECT_TRUE(chart.series[0].dash.empty());
  EXPECT_FALSE(chart.series[1].dash.empty());
  EXPECT_FALSE(chart.series[2].dash.empty());
  EXPECT_NE(chart.series[1].dash, chart.series[2].dash);
  EXPECT_FALSE(chart.series[1].color.empty());
  EXPECT_NE(chart.series[1].color, chart.series[2].color);
  const std::string html = sensitivity_html(m);
  EXPECT_NE(html.find("Drawn on one another (the dashed over the solid): reference, threads=2 and threads=3."), std::string::npos);
  EXPECT_NE(html.find("stroke-dasharray=\"8 4\""), std::string::npos);
}

}  // namespace
}  // namespace genrepro
