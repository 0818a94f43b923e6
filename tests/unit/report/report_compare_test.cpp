// The report's comparing parts and their plumbing: the verdict against a golden (--golden), A/B
// side by side (--label), the article's numbers beside the evidence's (--article), the table of
// contents and its anchors, small multiples, legends that are not cut, and the one gate that keeps
// NaN and infinities out of every writer.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "golden/article_check.hpp"
#include "evidence/evidence.hpp"
#include "report/report.hpp"
#include "report/report_svg.hpp"
#include "report/report_text.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace test {
inline void write_text(const std::filesystem::path& p, const std::string& text) { std::ofstream(p) << text; }
inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace test
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A sampled run (T = 1, top-p 0.9) of three steps whose tokens are `a`, `b`, `c`.
RunRecord sampled(const std::string& id, const std::string& experiment, int64_t a, int64_t b, int64_t c, int64_t kept = 3) {
  RunRecord r = test::make_run(id, DecodeMode::sample,
                               {test::make_step(0, a, {{a, 0.6}, {a + 1, 0.3}}, kept), test::make_step(1, b, {{b, 0.5}, {b + 1, 0.2}}, kept),
                                test::make_step(2, c, {{c, 0.7}, {c + 1, 0.2}}, kept)},
                               experiment);
  r.params.sampling.temperature = 1;
  r.params.sampling.top_p = 0.9;
  return r;
}

ReportDocument doc(const std::string& name, const std::vector<RunRecord>& runs, const std::string& label = "") {
  return ReportDocument{name, test::make_evidence(runs), label};
}

const ReportFile& file(const std::vector<ReportFile>& files, const std::string& name) {
  for (const ReportFile& f : files)
    if (f.name == name) return f;
  throw std::runtime_error("no report file " + name);
}

// Every attribute an SVG positions something with holds a number.
void expect_numeric_coordinates(const std::string& svg) {
  static const std::regex attribute(R"re(\b(x|y|x1|y1|x2|y2|cx|cy|r|width|height)="([^"]*)")re");
  static const std::regex number(R"re(-?[0-9]+(\.[0-9]+)?)re");
  std::size_t checked = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), attribute); it != std::sregex_iterator(); ++it, ++checked)
    EXPECT_TRUE(std::regex_match((*it)[2].str(), number)) << (*it)[0].str();
  static const std::regex points(R"re(points="([^"]*)")re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), points); it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(std::regex_match((*it)[1].str(), std::regex(R"re((-?[0-9.]+,-?[0-9.]+ ?)*)re"))) << (*it)[0].str();
  EXPECT_GT(checked, 0u);
}

// ---- numbers ----

TEST(ReportNumbers, NonFiniteValuesPrintAsNotANumber) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double v : {nan, inf, -inf}) {
    EXPECT_EQ(format_prob(v), kNotANumber);
    EXPECT_EQ(format_param(v), kNotANumber);
    EXPECT_EQ(format_fixed(v, 1), kNotANumber);
  }
  EXPECT_EQ(format_prob(0.25), "0.2500");
  EXPECT_EQ(numbers_gated("max |dp| inf at x, -nan there; inference nan_x 1e-05"), "max |dp| n/a at x, n/a there; inference nan_x 1e-05");
  EXPECT_EQ(format_fixed(-0.01, 1), "0.0");
}

TEST(ReportNumbers, ChartsNeverDrawAtNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  BarChartSpec bars{"b", "y", false, {"a", "b", "c"}, {nan, inf, 0.5}, {"n/a", "n/a", "0.5"}};
  expect_numeric_coordinates(svg_bar_chart(bars));
  bars.log_y = true;
  expect_numeric_coordinates(svg_bar_chart(bars));
  expect_numeric_coordinates(svg_grouped_bar_chart(GroupedBarChartSpec{"g", "y", {"a", "b"}, {"s"}, {{nan, -inf}}}));
  LineChartSpec lines;
  lines.series = {LineSeries{"s", {1, 2, 3}, {nan, inf, 0.2}, false}};
  expect_numeric_coordinates(svg_line_chart(lines));
}

// Evidence may hold NaN and infinities (written as "NaN", "Infinity"); no report file says nan or inf.
TEST(ReportNumbers, ReportOfNonFiniteEvidenceHasNoNanAnywhere) {
  RunRecord r = sampled("x/a", "x", 1, 2, 3);
  for (StepRecord& s : r.result.steps) {
    s.prob_t1 = std::numeric_limits<double>::quiet_NaN();
    for (Candidate& c : s.top) c.prob_scaled = std::numeric_limits<double>::infinity();
    s.rest_mass = -std::numeric_limits<double>::infinity();
  }
  ReportOptions against_golden;  // diff's reasons print |dp| with %g: "inf" must not pass either
  against_golden.golden = {EvidenceFile{"golden.json", test::make_evidence({sampled("x/a", "x", 1, 2, 3)})}};
  const std::vector<ReportFile> files = render_report({doc("e.json", {r})}, against_golden);
  EXPECT_THAT(file(files, "report.md").content, HasSubstr("## Verdict against the golden"));
  static const std::regex non_number(R"re(\b(nan|inf|infinity)\b)re", std::regex::icase);
  for (const ReportFile& f : files) {
    SCOPED_TRACE(f.name);
    EXPECT_FALSE(std::regex_search(f.content, non_number));
    if (f.name.size() > 4 && f.name.substr(f.name.size() - 4) == ".svg") expect_numeric_coordinates(f.content);
  }
  EXPECT_THAT(file(files, "report.md").content, HasSubstr("| n/a |"));
}

// ---- anchors and contents ----

TEST(ReportAnchors, GitHubStyleSlugsUniqueAndLinksResolved) {
  ReportContent c;
  const auto heading = [&](const std::string& text, int level) {
    ReportBlock b;
    b.kind = ReportBlock::Kind::heading;
    b.text = text;
    b.level = level;
    c.blocks.push_back(b);
  };
  heading("Experiment \"greedy\"", 3);
  heading("A/B: the evidence files side by side", 2);
  heading("Experiment \"greedy\"", 3);
  ReportBlock t;
  t.kind = ReportBlock::Kind::table;
  t.table.header = {"a", "b"};
  t.table.rows = {{"x", "y"}};
  t.table.links = {{"Experiment \"greedy\"", "No such heading"}};
  c.blocks.push_back(t);
  assign_anchors(c);
  EXPECT_EQ(c.blocks[0].anchor, "experiment-greedy");
  EXPECT_EQ(c.blocks[1].anchor, "ab-the-evidence-files-side-by-side");
  EXPECT_EQ(c.blocks[2].anchor, "experiment-greedy-1");
  EXPECT_EQ(c.blocks[3].table.links[0][0], "experiment-greedy");
  EXPECT_EQ(c.blocks[3].table.links[0][1], "");
  EXPECT_THAT(render_markdown(c), HasSubstr("| [x](#experiment-greedy) | y |"));
  EXPECT_THAT(render_html(c), HasSubstr("<td><a href=\"#experiment-greedy\">x</a></td><td>y</td>"));
}

TEST(ReportContents, EverySectionIsListedAndAnchored) {
  const std::vector<ReportFile> files = render_report({doc("e.json", {sampled("x/a", "x", 1, 2, 3)})});
  const std::string& md = file(files, "report.md").content;
  const std::string& html = file(files, "report.html").content;
  EXPECT_THAT(md, HasSubstr("**Contents**\n\n- [Greedy decoding and its repetition](#greedy-decoding-and-its-repetition)\n"));
  EXPECT_THAT(md, HasSubstr("  - [Experiment \"x\"](#experiment-x)\n"));
  EXPECT_THAT(html, HasSubstr("<nav class=\"toc\">"));
  EXPECT_THAT(html, HasSubstr("<li><a href=\"#nucleus-sizes\">Nucleus sizes</a></li>"));
  EXPECT_THAT(html, HasSubstr("<h2 id=\"nucleus-sizes\">Nucleus sizes</h2>"));
  EXPECT_THAT(html, HasSubstr("<h3 id=\"experiment-x\">Experiment &quot;x&quot;</h3>"));
}

// ---- the verdict against the golden ----

TEST(ReportVerdict, NamesTheDifferingRunItsFirstDivergenceAndLinksIt) {
  const RunRecord same = sampled("x/same", "x", 1, 2, 3);
  const EvidenceFile golden{"golden/x.json", test::make_evidence({same, sampled("x/changed", "x", 1, 2, 3)})};
  ReportOptions options;
  options.golden = {golden};
  options.golden_name = "golden";
  const std::vector<ReportFile> files = render_report({doc("new.json", {same, sampled("x/changed", "x", 1, 5, 6)})}, options);
  const std::string& md = file(files, "report.md").content;
  EXPECT_THAT(md, HasSubstr("## Verdict against the golden"));
  EXPECT_THAT(md, HasSubstr("**❌ FAIL: 1 run(s) differ, 0 missing, 0 extra.**"));
  EXPECT_THAT(file(files, "report.html").content, HasSubstr("<p class=\"fail\">FAIL: 1 run(s) differ, 0 missing, 0 extra.</p>"));
  EXPECT_THAT(md, HasSubstr("| [x/changed](#experiment-x) | "));
  EXPECT_THAT(md, HasSubstr(" | **new token 2 (steps\\[1\\])** | 2 \" t2\" p 0.5000 | 5 \" t5\" p 0.5000 | "));
  EXPECT_THAT(md, Not(HasSubstr("[x/same]"))) << "agreeing runs are not listed";
  EXPECT_LT(md.find("## Verdict against the golden"), md.find("## Greedy decoding")) << "the report opens with the verdict";
  EXPECT_THAT(file(files, "report.html").content, HasSubstr("<a href=\"#verdict-against-the-golden\">"));

  const std::vector<ReportFile> agree = render_report({doc("same.json", golden.evidence.runs)}, options);
  EXPECT_THAT(file(agree, "report.html").content, HasSubstr("<p class=\"pass\">PASS: every run reproduces the golden.</p>\n<p>diff: 2 runs compared, 2 agree"));
  EXPECT_THAT(file(render_report({doc("same.json", golden.evidence.runs)}), "report.md").content, Not(HasSubstr("Verdict")));
}

// ---- A/B ----

TEST(ReportAB, TwoLabelledFilesSideBySideWithTheDifferenceHighlighted) {
  const std::vector<ReportFile> files = render_report(
      {doc("a.json", {sampled("x/a", "x", 1, 2, 3), sampled("x/b", "x", 1, 2, 3)}, "before"),
       doc("b.json", {sampled("x/a", "x", 1, 2, 3), sampled("x/b", "x", 1, 2, 9)}, "after")});
  const std::string& md = file(files, "report.md").content;
  EXPECT_THAT(md, HasSubstr("## A/B: the evidence files side by side"));
  EXPECT_THAT(md, HasSubstr("Runs matched by id across before = a.json; after = b.json."));
  EXPECT_THAT(md, HasSubstr("| run | before: stop | before: continuation | after: stop | after: continuation | after vs before |"));
  EXPECT_THAT(md, HasSubstr("| [x/a](#experiment-x) | limit, 3 tokens | \" t1 t2 t3\" | limit, 3 tokens | \" t1 t2 t3\" | agree |"));
  // The excerpt is centred on the first token where the runs part, that token marked in both.
  EXPECT_THAT(md, HasSubstr("| limit, 3 tokens | \" t1 t2⟦ t3⟧\" | limit, 3 tokens | **\" t1 t2⟦ t9⟧\"** | **"));
  EXPECT_THAT(md, HasSubstr("at new token 3 (steps\\[2\\])** |"));
  EXPECT_THAT(md, HasSubstr("2 comparisons with before: 1 agree, 1 differ."));
  EXPECT_THAT(md, HasSubstr("\\[after\\]")) << "legends use the label";
  EXPECT_THAT(file(files, "report.html").content, HasSubstr("<td class=\"diff\">"));
}

// A grid's A/B: 13 runs, one of them changed. Only the changed row is in view; all 13 are folded.
TEST(ReportAB, ManyRunsShowTheDifferingRowsAndFoldTheRest) {
  std::vector<RunRecord> before, after;
  for (int i = 0; i < 13; ++i) {
    const std::string id = "x/r" + std::to_string(i);
    before.push_back(sampled(id, "x", 1, 2, 3));
    after.push_back(sampled(id, "x", 1, 2, i == 7 ? 9 : 3));
  }
  const std::string md = file(render_report({doc("a.json", before, "before"), doc("b.json", after, "after")}), "report.md").content;
  const std::size_t fold = md.find("<details>\n<summary>All 13 runs side by side</summary>");
  ASSERT_NE(fold, std::string::npos) << md;
  const std::size_t changed = md.find("| [x/r7](#experiment-x) |");
  EXPECT_LT(changed, fold) << "the differing run is in view, above the fold";
  EXPECT_LT(md.find("| [x/r0](#experiment-x) |"), md.find("</details>"));
  EXPECT_GT(md.find("| [x/r0](#experiment-x) |"), fold) << "an agreeing run is only in the folded table";
  EXPECT_NE(md.find("| [x/r7](#experiment-x) |", fold), std::string::npos) << "the folded table holds every run";
}

TEST(ReportAB, ShardsWithoutSharedRunsArePooledNotCompared) {
  const std::vector<ReportFile> files =
      render_report({doc("s1.json", {sampled("x/a", "x", 1, 2, 3)}), doc("s2.json", {sampled("x/b", "x", 1, 2, 3)})});
  EXPECT_THAT(file(files, "report.md").content, Not(HasSubstr("A/B")));
}

// ---- the article ----

OrderedJson facts() {
  return OrderedJson::parse(R"({"schema": "genrepro.article-facts/1", "prompt": "the river bank was",
      "generations": [{"name": "t1", "params": {"mode": "sample", "temperature": 1.0, "top_p": 0.9, "seed": 42, "max_new_tokens": 3},
                       "text": "the river bank was t1 t2 t3", "stop": {"reason": "eos", "step": 2}}],
      "nucleus_sizes": [{"temperature": 1.0, "top_p": 0.9, "step": 0, "kept": 35}],
      "eos": {"token_id": 50256, "text": "<|endoftext|>"}})");
}

TEST(ReportArticle, TheArticlesNumbersStandBesideTheEvidences) {
  ReportOptions options;
  options.article_facts = facts();
  options.article_name = "article-facts.json";
  const std::vector<ReportFile> files = render_report({doc("e.json", {sampled("x/a", "x", 1, 2, 3, 35), sampled("x/b", "x", 1, 2, 3, 7)})}, options);
  const std::string& md = file(files, "report.md").content;
  EXPECT_THAT(md, HasSubstr("| tokens kept | article | same as the article | run |"));
  EXPECT_THAT(md, HasSubstr("| 35 | 35 | yes | x/a |"));
  EXPECT_THAT(md, HasSubstr("## Against the article"));
  EXPECT_THAT(md, HasSubstr("| nucleus T=1 p=0.9 at new token 1 (steps\\[0\\]) | 35 | 35 / 7 | **differs** |"));
  EXPECT_THAT(md, HasSubstr("| eos token id | 50256 | 50256 | match |"));
  // The stopping table: the article's stop beside each run's, a difference highlighted.
  EXPECT_THAT(md, HasSubstr("| the article | same as the article |"));
  EXPECT_THAT(md, HasSubstr("| 3 | \" t3\" (id 3) | eos at new token 2 | **no** |"));
}

// ---- small multiples and legends ----

TEST(ReportCharts, ManyRunsBecomePanelsOnOneAxis) {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 9; ++i) runs.push_back(sampled("x/r" + std::to_string(i), "x", 1, 2, 3, 1 + i * 100));
  const std::vector<ReportFile> files = render_report({doc("e.json", runs)});
  std::vector<std::string> panels;
  for (const std::string name : {"kept-per-step.svg", "kept-per-step-2.svg", "kept-per-step-3.svg"}) {
    const std::string& svg = file(files, name).content;
    std::size_t lines = 0;
    for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
    EXPECT_LE(lines, 4u) << name;
    // The y axis: its tick labels, the same in every panel.
    std::string ticks;
    static const std::regex tick(R"re(text-anchor="end">([^<]*)<)re");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it) ticks += (*it)[1].str() + " ";
    panels.push_back(ticks);
  }
  EXPECT_EQ(panels[0], panels[2]);
  EXPECT_THAT(file(files, "kept-per-step-3.svg").content, HasSubstr("(panel 3 of 3)"));
  EXPECT_THROW(file(files, "kept-per-step-4.svg"), std::runtime_error);
}

// One label ("T=1 p=0.9 seed=42") could name different runs in two panels; with two prompts
// each legend names its run's prompt.
TEST(ReportCharts, LegendsNameThePromptWhenThereAreSeveral) {
  RunRecord other = sampled("x/b", "x", 1, 2, 3);
  other.prompt = "once upon a time";
  const std::vector<ReportFile> files = render_report({doc("e.json", {sampled("x/a", "x", 1, 2, 3), other})});
  EXPECT_THAT(file(files, "kept-per-step.svg").content, HasSubstr(">T=1 top_p=0.9 seed=42 &quot;once upon a time&quot;</text>"));
  EXPECT_THAT(file(files, "chosen-token-probability.svg").content, HasSubstr(">T=1 top_p=0.9 seed=42 &quot;the river bank was&quot;</text>"));
  const std::vector<ReportFile> one = render_report({doc("e.json", {sampled("x/a", "x", 1, 2, 3)})});
  EXPECT_THAT(file(one, "kept-per-step.svg").content, HasSubstr(">T=1 top_p=0.9 seed=42</text>")) << "one prompt: no need to name it";
}

// A seed's colour must not change from chart to chart. A greedy run first, then a sampled one:
// the sampled run is the kept-set chart's first series and the probability chart's second, in
// the same colour in both.
TEST(ReportCharts, ARunKeepsItsColourInEveryChart) {
  RunRecord greedy = test::make_run("x/g", DecodeMode::greedy, test::greedy_steps(), "x");
  const std::vector<ReportFile> files = render_report({doc("e.json", {greedy, sampled("x/s", "x", 1, 2, 3)})});
  const std::string colour = palette_color(1);
  const auto first_line = [](const std::string& svg) {
    const std::size_t at = svg.find("<polyline");
    return at == std::string::npos ? std::string() : svg.substr(at, svg.find("/>", at) - at);
  };
  EXPECT_THAT(first_line(file(files, "kept-per-step.svg").content), HasSubstr("stroke=\"" + colour + "\""));
  const std::string& prob = file(files, "chosen-token-probability.svg").content;
  const std::size_t second = prob.find("<polyline", prob.find("<polyline") + 1);
  ASSERT_NE(second, std::string::npos);
  EXPECT_THAT(prob.substr(second, prob.find("/>", second) - second), HasSubstr("stroke=\"" + colour + "\""));
  EXPECT_THAT(first_line(prob), HasSubstr("stroke=\"" + palette_color(0) + "\""));
}

TEST(ReportCharts, LongLegendLabelsAreNotCut) {
  LineChartSpec chart;
  const std::string label = "T=1 p=0.9 seed=43 order=temperature→top_p→top_k [after-the-change]";
  chart.series = {LineSeries{label, {1, 2}, {0.1, 0.2}, false}};
  EXPECT_THAT(svg_line_chart(chart), HasSubstr(">" + label + "</text>"));
}

// Symlinks at output paths (docs/report.md): a report file that is a link is replaced by
// a regular file; the link's target is never written through.
TEST(ReportWrite, ALinkInTheOutputDirectoryIsReplacedNotFollowed) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "genrepro_report_symlink";
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  test::write_text(dir / "target.md", "keep\n");
  fs::create_symlink(dir / "target.md", dir / "out" / "report.md");
  write_report({ReportFile{"report.md", "new\n"}}, (dir / "out").string());
  EXPECT_EQ(test::read_text(dir / "target.md"), "keep\n");
  EXPECT_FALSE(fs::is_symlink(dir / "out" / "report.md"));
  EXPECT_EQ(test::read_text(dir / "out" / "report.md"), "new\n");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace genrepro
