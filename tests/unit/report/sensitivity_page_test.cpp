// DIR/sensitivity.html on a hand-made matrix with every class planted at a known run and cell:
// the page read back as text (the heatmap's rows, columns, colours, legend and tooltips; the
// survival chart's axes and ticks; the tables), not compared with a stored copy of itself.
#include "report/sensitivity_page.hpp"

#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "unit/compare/planted_flip.hpp"

namespace genrepro {
namespace {

using test::b_flipped;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::near_tie_steps;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// The SVG of the figure whose <title> is `title`.
std::string svg_titled(const std::string& html, const std::string& title) {
  const std::size_t t = html.find("<title>" + title + "</title>");
  if (t == std::string::npos) return "";
  const std::size_t start = html.rfind("<svg", t);
  return html.substr(start, html.find("</svg>", t) + 6 - start);
}

// Runs a (experiment "first") and b, c (experiment "second"); cells: the reference, "bits" (a's
// probabilities nudged: same tokens), "flip" (b flips at new token 2), "partial" (no run c).
SensitivityMatrix every_class() {
  const RunRecord a = make_run("a", DecodeMode::greedy, greedy_steps(), "first");
  const RunRecord b = make_run("b", DecodeMode::greedy, near_tie_steps(), "second");
  const RunRecord c = make_run("c", DecodeMode::greedy, greedy_steps(), "second");
  std::vector<StepRecord> nudged = greedy_steps();
  nudged[2].top[1].prob += 1e-7;
  std::vector<SensitivityCell> cells;
  cells.push_back({"ref", {{"threads", "1"}}, EvidenceFile{"ref.json", make_evidence({a, b, c})}});
  cells.push_back({"bits", {{"threads", "2"}}, EvidenceFile{"bits.json", make_evidence({make_run("a", DecodeMode::greedy, nudged, "first"), b, c})}});
  cells.push_back({"flip", {{"threads", "3"}},
                   EvidenceFile{"flip.json", make_evidence({a, make_run("b", DecodeMode::greedy, b_flipped(), "second"), c})}});
  cells.push_back({"partial", {{"threads", "4"}}, EvidenceFile{"partial.json", make_evidence({a, b})}});
  return build_sensitivity(cells, 0);
}

TEST(SensitivityPage, SelfContainedWithEverySection) {
  const std::string html = sensitivity_html(every_class());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  // The only URL is SVG's namespace name, which nothing fetches.
  EXPECT_EQ(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  for (const char* h : {"Runs by cells", "Survival", "Classes per cell", "One factor at a time", "The margin that predicts a flip",
                        "The predictor on held-out cells"})
    EXPECT_NE(html.find(">" + std::string(h) + "</h2>"), std::string::npos) << h;
  // The predictor beside MarginGate's trigger rate; one flip in one cell: no held-out recall.
  EXPECT_NE(html.find("<td>m* (the largest reference margin at a flip: logit margin, or T x draw margin when sampled)</td><td class=\"num\">0.0253</td>"), std::string::npos);
  EXPECT_NE(html.find("15-50 %"), std::string::npos);
  EXPECT_NE(html.find("not enough cells to hold one out"), std::string::npos);
  // Class shares: "bits" has 1 of 3 runs same tokens, "partial" one missing; the planted runs carry
  // no logits digests, so none of the identical ones is proven by them (the column after identical).
  EXPECT_NE(html.find("<td>bits</td><td>threads=2</td><td>-</td><td class=\"num\">66.7 %</td><td class=\"num\">0</td>"
                      "<td class=\"num\">33.3 %</td>"),
            std::string::npos);
}

TEST(SensitivityPage, HeatmapHasEveryRunOnceEveryCellAColumnAndEveryClassItsColour) {
  const std::string html = sensitivity_html(every_class());
  const std::string svg = svg_titled(html, "Every run in every cell, against the reference");
  ASSERT_FALSE(svg.empty()) << html;
  // Row labels are run labels (the parameter table's); b and c of one experiment would read alike
  // ("p0 greedy"), so they show their ids.
  for (const char* row : {"p0 greedy", "b", "c"})
    EXPECT_EQ(count(svg, "font-size=\"10\">" + std::string(row) + "</text>"), 1u) << row;  // its row label, once
  for (const char* run : {"a", "b", "c"})
    EXPECT_EQ(count(svg, "<title>" + std::string(run) + " in "), 4u) << run;  // a cell in each column
  for (const char* cell : {"ref", "bits", "flip", "partial"})
    EXPECT_EQ(count(svg, "font-size=\"11\">" + std::string(cell) + "</text>"), 1u) << cell;  // its column label
  EXPECT_EQ(count(svg, ">experiment first</text>"), 1u);
  EXPECT_EQ(count(svg, ">experiment second</text>"), 1u);
  for (const char* legend : {">identical</text>", ">same tokens, different bits</text>", ">diverged (N: at new token N)</text>", ">missing</text>"})
    EXPECT_NE(svg.find(legend), std::string::npos) << legend;
  const auto cell = [&](CellClass cls, const std::string& title) {
    return svg.find("fill=\"" + std::string(class_color(cls)) + "\"><title>" + title) != std::string::npos;
  };
  EXPECT_TRUE(cell(CellClass::identical, "a in ref (the reference): identical"));
  EXPECT_TRUE(cell(CellClass::same_tokens, "a in bits: same tokens, different bits (largest |Δ probability| 1e-07"));
  EXPECT_TRUE(cell(CellClass::diverged, "b in flip: diverged at new token 2 (logit margin: reference 0.0253"));
  EXPECT_TRUE(cell(CellClass::missing, "c in partial: missing"));
  // The diverged cell names its new token in the cell too.
  EXPECT_TRUE(std::regex_search(svg, std::regex("<title>b in flip: [^<]*</title></rect>\n<text [^>]*fill=\"#ffffff\">2</text>")));
  // Its frame, as the screenshot test finds axes: two #555555 lines before anything else drawn in that grey.
  EXPECT_EQ(count(svg, "stroke=\"#555555\""), 2u);
}

TEST(SensitivityPage, SurvivalChartHasALinePerCellAndBothAxes) {
  const SensitivityMatrix m = every_class();
  const std::string svg = svg_titled(sensitivity_html(m), "Survival: runs still agreeing with the reference");
  ASSERT_FALSE(svg.empty());
  EXPECT_GE(count(svg, "stroke=\"#555555\""), 2u);
  for (const char* tick : {">0.00</text>", ">0.20</text>", ">1.00</text>", ">0</text>", ">3</text>"})
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(svg.find(">new tokens t</text>"), std::string::npos);
  EXPECT_NE(svg.find(">share of runs agreeing</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline"), 4u);
  for (const char* legend : {">ref (reference)</text>", ">bits</text>", ">flip</text>", ">partial</text>"})
    EXPECT_NE(svg.find(legend), std::string::npos) << legend;
  // The flip cell as a step function: 1 up to new token 2, then 2 of 3 runs (the points by hand).
  const LineChartSpec chart = sensitivity_survival_chart(m);
  EXPECT_EQ(chart.series[2].x, (std::vector<double>{0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(chart.series[2].y, (std::vector<double>{1, 1, 1, 1, 2.0 / 3, 2.0 / 3, 2.0 / 3}));
}

TEST(SensitivityPage, HundredsOfRunsEachARowWithColumnLabelsBelowToo) {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 300; ++i) runs.push_back(make_run("run-" + std::to_string(i), DecodeMode::greedy, greedy_steps(), i < 150 ? "one" : "two"));
  std::vector<SensitivityCell> cells;
  cells.push_back({"kernels-portable_threads-1_numerics-reference_batch-1", {{"threads", "1"}, {"kernels", "portable"}},
                   EvidenceFile{"r.json", make_evidence(runs)}});
  cells.push_back({"kernels-portable_threads-2_numerics-reference_batch-1", {{"threads", "2"}, {"kernels", "portable"}},
                   EvidenceFile{"t.json", make_evidence(runs)}});
  const HeatmapSpec spec = sensitivity_heatmap(build_sensitivity(cells, 0));
  EXPECT_EQ(spec.rows.size(), 300u);
  // Long cell names: the reference and what the other cell changed.
  EXPECT_EQ(spec.columns, (std::vector<std::string>{"reference", "threads=2"}));
  const std::string svg = svg_heatmap(spec);
  EXPECT_EQ(count(svg, "font-size=\"10\">run-"), 300u);
  EXPECT_EQ(count(svg, ">threads=2</text>"), 2u);  // above and below the 300 rows
  EXPECT_EQ(count(svg, "font-weight=\"bold\">experiment "), 2u);
}

}  // namespace
}  // namespace genrepro

namespace genrepro {
namespace {

// Three copies of one greedy run (the experiment's replicas), the third flipped in cell "batch".
TEST(SensitivityPage, IdenticalRunsTableOnlyWhenTheMatrixHoldsCopies) {
  const auto copy = [](int64_t k, bool flip) {
    RunRecord r = make_run("", DecodeMode::greedy, flip ? b_flipped() : near_tie_steps(), "copies");
    r.params.replica = k;
    r.id = run_id(r.experiment, r.prompt_index, r.prompt, r.params);
    return r;
  };
  std::vector<SensitivityCell> cells;
  cells.push_back({"alone", {{"batch", "1"}}, EvidenceFile{"alone.json", make_evidence({copy(0, false), copy(1, false), copy(2, false)})}});
  cells.push_back({"batch", {{"batch", "16-inexact"}}, EvidenceFile{"batch.json", make_evidence({copy(0, false), copy(1, false), copy(2, true)})}});
  const std::string html = sensitivity_html(build_sensitivity(cells, 0));
  EXPECT_NE(html.find(">Identical runs, distinct completions</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>" + copy(0, false).id + "</td><td class=\"num\">3</td><td>1 (all 3 of 3)</td>"
                      "<td>2 (most common: 2 of 3; 1 unlike the reference&#39;s copy 0)</td>"),
            std::string::npos)
      << html.substr(html.find("Identical runs"), 1500);
  EXPECT_EQ(sensitivity_html(every_class()).find("Identical runs, distinct completions"), std::string::npos);
}

}  // namespace
}  // namespace genrepro
