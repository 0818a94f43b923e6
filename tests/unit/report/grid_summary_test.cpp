// Grid summaries (harness/report/grid_summary.hpp) on runs small enough to check on paper: the
// generator against splitmix64's published outputs, the quantile against numpy's default (type
// 7), each per-run figure, and a five-seed grid's cell, CSV and page. The whole computation on a
// 300-run grid is recomputed independently in Python by cli.report.grid_figures.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "params/framework_params.hpp"
#include "params/param_table.hpp"

#include "report/grid_summary.hpp"
#include "report/report.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Quantiles and means of a handful of doubles computed by hand: exact to the last few ulps.
constexpr double kExact = 1e-12;

// A sampled run (T = 1, top-p 0.9) of the given new tokens, kept-set sizes and seed.
RunRecord seeded_run(const std::string& id, uint64_t seed, const std::vector<int64_t>& ids, int64_t kept = 4, bool eos = false) {
  std::vector<StepRecord> steps;
  for (size_t i = 0; i < ids.size(); ++i)
    steps.push_back(test::make_step(static_cast<int64_t>(i), ids[i], {{ids[i], 0.5}, {ids[i] + 1000, 0.25}}, kept + static_cast<int64_t>(i)));
  RunRecord r = test::make_run(id, DecodeMode::sample, steps, "grid");
  r.params.sampling.temperature = 1;
  r.params.sampling.top_p = 0.9;
  r.params.sampling.seed = seed;
  if (eos) r.result.stop_reason = StopReason::eos;
  return r;
}

// Sebastiano Vigna's reference outputs of splitmix64 (prng.di.unimi.it; also Java's
// SplittableRandom test vectors): seed 0 and seed 1234567.
TEST(GridSummary, SplitMix64GivesThePublishedOutputs) {
  SplitMix64 zero(0);
  EXPECT_EQ(zero.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(zero.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(zero.next(), 0x06C45D188009454Full);
  SplitMix64 other(1234567);
  EXPECT_EQ(other.next(), 6457827717110365317ull);
  EXPECT_EQ(other.next(), 3203168211198807973ull);
  // below(n) is the high half of next() * n: every index in range, and 2^63 maps to n / 2.
  SplitMix64 draws(7);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(draws.below(5), 5u);
}

// numpy.quantile([1, 2, 3, 4], q) with its default (linear) method: 1.75, 2.5, 3.925.
TEST(GridSummary, QuantileIsNumpysDefault) {
  const std::vector<double> v = {1, 2, 3, 4};
  EXPECT_NEAR(quantile_sorted(v, 0.25), 1.75, kExact);
  EXPECT_NEAR(quantile_sorted(v, 0.5), 2.5, kExact);
  EXPECT_NEAR(quantile_sorted(v, 0.975), 3.925, kExact);
  EXPECT_EQ(quantile_sorted(v, 1.0), 4);
  EXPECT_EQ(quantile_sorted({7}, 0.025), 7);
  EXPECT_TRUE(std::isnan(quantile_sorted({}, 0.5)));
}

TEST(GridSummary, LongestRepeatDoesNotCountOverlappingSpans) {
  EXPECT_EQ(longest_repeat_length({1, 2, 3, 1, 2, 3}), 3u);
  EXPECT_EQ(longest_repeat_length({1, 1, 1}), 1u) << "\"1 1\" at 0 and at 1 overlap";
  EXPECT_EQ(longest_repeat_length({1, 1, 1, 1}), 2u);
  EXPECT_EQ(longest_repeat_length({1, 2, 3}), 0u);
  EXPECT_EQ(longest_repeat_length({}), 0u);
}

// 5 6 7 8 5 6 7 8: 4-grams 5678 6785 7856 8567 5678, one seen before (1/5); 4 distinct of 8
// tokens; bigrams 56 67 78 85 56 67 78, 4 distinct of 7; every chosen token had p = 0.5.
TEST(GridSummary, RunFiguresByHand) {
  const RunFigures f = run_figures(seeded_run("grid/a", 1, {5, 6, 7, 8, 5, 6, 7, 8}));
  EXPECT_EQ(f.new_tokens, 8);
  EXPECT_FALSE(f.eos);
  EXPECT_EQ(f.longest_repeat, 4u);
  ASSERT_TRUE(f.repeated_ngram_rate && f.distinct_1 && f.distinct_2 && f.chosen_prob);
  EXPECT_NEAR(*f.repeated_ngram_rate, 0.2, kExact);
  EXPECT_NEAR(*f.distinct_1, 0.5, kExact);
  EXPECT_NEAR(*f.distinct_2, 4.0 / 7.0, kExact);
  EXPECT_NEAR(*f.chosen_prob, 0.5, kExact);
  // Too short for 4-grams and bigrams: those figures are undefined, not 0.
  const RunFigures one = run_figures(seeded_run("grid/b", 2, {9}));
  EXPECT_FALSE(one.repeated_ngram_rate);
  EXPECT_FALSE(one.distinct_2);
  ASSERT_TRUE(one.distinct_1);
  EXPECT_EQ(*one.distinct_1, 1.0);
}

// Five seeds, two of which stop at EOS and two of which say the same thing.
std::vector<RunRecord> five_seeds() {
  return {seeded_run("grid/s1", 1, {1, 2, 3}, 4, true), seeded_run("grid/s2", 2, {1, 2, 3}, 6, true), seeded_run("grid/s3", 3, {4, 5, 6}, 8),
          seeded_run("grid/s4", 4, {7, 8, 9}, 10), seeded_run("grid/s5", 5, {10, 11, 12}, 12)};
}

TEST(GridSummary, AFiveSeedCellWithIntervals) {
  const std::vector<GridSummary> grids = summarize_grids({ReportDocument{"e.json", test::make_evidence(five_seeds()), ""}}, 24);
  ASSERT_EQ(grids.size(), 1u);
  ASSERT_EQ(grids[0].cells.size(), 1u);
  const GridCell& c = grids[0].cells[0];
  EXPECT_EQ(c.runs.size(), 5u);
  EXPECT_EQ(c.parameters, "T=1 top_p=0.9");
  EXPECT_EQ(c.distinct_continuations, 4u);
  const Estimate& eos = c.figures[0];
  EXPECT_NEAR(eos.value, 0.4, kExact);
  EXPECT_EQ(eos.n, 5u);
  EXPECT_LE(eos.lo, eos.value);
  EXPECT_GE(eos.hi, eos.value);
  EXPECT_GE(eos.lo, 0.0);
  EXPECT_LE(eos.hi, 1.0);
  EXPECT_LT(eos.lo, eos.hi) << "five seeds, two of them EOS: resamples differ";
  EXPECT_NEAR(c.figures[2].value, 0.6, kExact) << "3 of 5 continuations no other seed repeats";
  // Kept at new token 1: 4 6 8 10 12 -> median 8, quartiles 6 and 10.
  ASSERT_EQ(c.kept.size(), 3u);
  EXPECT_EQ(c.kept[0].n, 5u);
  EXPECT_NEAR(c.kept[0].median, 8, kExact);
  EXPECT_NEAR(c.kept[0].q1, 6, kExact);
  EXPECT_NEAR(c.kept[0].q3, 10, kExact);
  // The stream seed is the first output of splitmix64(24), as docs/report.md says.
  EXPECT_EQ(c.stream_seed, SplitMix64(24).next());
  // The same seed gives the same numbers; the bootstrap seed reaches the intervals.
  const std::vector<GridSummary> again = summarize_grids({ReportDocument{"e.json", test::make_evidence(five_seeds()), ""}}, 24);
  EXPECT_EQ(again[0].cells[0].figures[0].lo, eos.lo);
  EXPECT_EQ(again[0].cells[0].figures[0].hi, eos.hi);
  EXPECT_NE(summarize_grids({ReportDocument{"e.json", test::make_evidence(five_seeds()), ""}}, 25)[0].cells[0].stream_seed, c.stream_seed);
}

TEST(GridSummary, FewerSeedsThanAGridStayRunByRun) {
  std::vector<RunRecord> four = five_seeds();
  four.pop_back();
  EXPECT_TRUE(summarize_grids({ReportDocument{"e.json", test::make_evidence(four), ""}}).empty());
}

TEST(GridSummary, ThePageTheCsvAndTheFold) {
  const std::vector<ReportFile> files = render_report({ReportDocument{"e.json", test::make_evidence(five_seeds()), ""}});
  const auto content = [&](const std::string& name) {
    for (const ReportFile& f : files)
      if (f.name == name) return f.content;
    ADD_FAILURE() << "no " << name;
    return std::string();
  };
  const std::string md = content("report.md");
  EXPECT_THAT(md, HasSubstr("## Grid summaries"));
  EXPECT_THAT(md, HasSubstr("5 runs, all counted, in 1 cell (1 prompt x 1 parameter values)"));
  EXPECT_THAT(md, HasSubstr("| 1 | T=1 top\\_p=0.9 | 5 | 0.40 \\[0."));
  EXPECT_THAT(md, HasSubstr("<details>\n<summary>All 5 runs of &quot;grid&quot;, one by one</summary>"));
  EXPECT_LT(md.find("## Grid summaries"), md.find("## Greedy decoding")) << "the summaries come before the run-by-run sections";
  const std::string csv = content("grid-cells.csv");
  // One column per parameter of the table that a cell holds fixed (every compared parameter but
  // the seed and copy index it pools), numbers as written.
  std::string params_header;
  for (const ParamRow& row : param_table()) {
    const std::string key = row.key;
    if (key == "seed" || key == "replica") continue;
    if (key == "framework") params_header = "framework," + params_header;
    else params_header += key + ",";
  }
  EXPECT_THAT(csv, HasSubstr("grid,experiment,document,cell,prompt,parameters," + params_header +
                             "runs,bootstrap_seed,resamples,stream_seed,eos_rate,eos_rate_lo,eos_rate_hi,eos_rate_n,"));
  EXPECT_THAT(csv, HasSubstr("\r\n0,grid,,0,the river bank was,T=1 top_p=0.9,article,sample,1,0,0.9,temperature top_k top_p,article,torch,3,"));
  EXPECT_THAT(csv, Not(HasSubstr("0.90000000000000002")));
  EXPECT_THAT(content("grid-kept-per-step.csv"), HasSubstr("\r\n0,0,1,5,8,6,10,"));
  EXPECT_THAT(content("grid-1-eos.svg"), HasSubstr("<title>EOS rate</title>"));
  EXPECT_THAT(content("report.html"), HasSubstr("<figure class=\"half\">"));
  EXPECT_THAT(content("report.html"), Not(HasSubstr("nan")));
}

std::string report_md(const std::vector<RunRecord>& runs) {
  for (const ReportFile& f : render_report({ReportDocument{"e.json", test::make_evidence(runs), ""}}))
    if (f.name == "report.md") return f.content;
  return "";
}

TEST(GridSummary, CopiesOfOneRunAreSaidToBeCopies) {
  EXPECT_THAT(report_md(five_seeds()), Not(HasSubstr("repeats runs (replicas)")));
  std::vector<RunRecord> copies;
  for (int64_t k = 0; k < 5; ++k) {
    RunRecord r = seeded_run("c" + std::to_string(k), 7, k == 4 ? std::vector<int64_t>{5, 6, 9} : std::vector<int64_t>{5, 6, 7});
    r.params.replica = k;
    copies.push_back(r);
  }
  const std::string md = report_md(copies);
  EXPECT_THAT(md, HasSubstr("This experiment repeats runs (replicas): copies of one run share its seed"));
  EXPECT_THAT(md, HasSubstr("| 2 of 5 |"));  // distinct continuations: the fifth copy parted
}

}  // namespace
}  // namespace genrepro

namespace genrepro {
namespace {

// The framework grid of experiments/grids/framework_grid.json in small: T 0.7 / 1.0 / 1.3 under
// the article's loop, llama.cpp's defaults and Hugging Face's with repetition_penalty 1.3, five
// seeds a cell. Every cell's label names its framework and the controls it turns on, in whole
// stage names, no label is cut in any chart, and nine cells take nine colours.
std::vector<RunRecord> framework_grid() {
  std::vector<RunRecord> runs;
  for (Framework f : {Framework::article, Framework::llama_cpp, Framework::hf}) {
    for (double t : {0.7, 1.0, 1.3}) {
      for (uint64_t seed = 1; seed <= 5; ++seed) {
        RunRecord r = seeded_run(std::string("grid/") + to_string(f) + "-" + std::to_string(t) + "-" + std::to_string(seed), seed,
                                 {1, 2, static_cast<int64_t>(seed)});
        resolve_framework(r.params.sampling, f);
        r.params.sampling.temperature = t;
        if (f == Framework::article) r.params.sampling.top_p = 1.0;
        if (f == Framework::hf) r.params.sampling.controls.repetition_penalty = 1.3;
        runs.push_back(std::move(r));
      }
    }
  }
  return runs;
}

TEST(GridSummary, AFrameworkGridNamesEachCellsFrameworkAndControls) {
  const std::vector<GridSummary> grids = summarize_grids({ReportDocument{"e.json", test::make_evidence(framework_grid()), ""}}, 24);
  ASSERT_EQ(grids.size(), 1u);
  std::vector<std::string> labels;
  for (const GridCell& c : grids[0].cells) labels.push_back(c.parameters);
  EXPECT_EQ(labels, (std::vector<std::string>{
                        "article T=0.7", "article T=1", "article T=1.3",
                        "llama.cpp T=0.7 top_k=40 top_p=0.95 min_p=0.05", "llama.cpp T=1 top_k=40 top_p=0.95 min_p=0.05",
                        "llama.cpp T=1.3 top_k=40 top_p=0.95 min_p=0.05",
                        "hf T=0.7 top_k=50 repetition_penalty=1.3", "hf T=1 top_k=50 repetition_penalty=1.3",
                        "hf T=1.3 top_k=50 repetition_penalty=1.3"}));
  const std::vector<ReportFile> files = render_report({ReportDocument{"e.json", test::make_evidence(framework_grid()), ""}});
  std::set<std::string> colours;
  for (const ReportFile& f : files) {
    if (f.name.rfind("grid-", 0) != 0 || f.name.size() < 4 || f.name.compare(f.name.size() - 4, 4, ".svg") != 0) continue;
    EXPECT_THAT(f.content, Not(HasSubstr("\xE2\x80\xA6"))) << f.name << " cuts a label";
    for (const std::string& label : labels) EXPECT_THAT(f.content, HasSubstr(label)) << f.name;
    for (size_t at = f.content.find("stroke=\"#"); at != std::string::npos; at = f.content.find("stroke=\"#", at + 1))
      colours.insert(f.content.substr(at + 8, 7));
  }
  for (const char* grey : {"#555555", "#e4e4e4"}) colours.erase(grey);
  EXPECT_GE(colours.size(), 9u) << "nine cells, nine colours";
  // The CSV says each cell's framework and its controls in their own columns.
  std::string csv;
  for (const ReportFile& f : files)
    if (f.name == "grid-cells.csv") csv = f.content;
  EXPECT_THAT(csv, HasSubstr(",llama.cpp,sample,0.7,40,0.95,"));
  EXPECT_THAT(csv, HasSubstr(",hf,sample,1.3,50,1,"));
}

}  // namespace
}  // namespace genrepro
