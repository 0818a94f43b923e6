#pragma once
// Grid summaries: an experiment's runs aggregated over seeds, per cell (one prompt x one set of
// every other parameter value), with a 95 % bootstrap interval on every figure. Plain numbers in
// and out, no drawing (report_sections_grid.cpp draws them) and no libtorch; the same evidence and
// bootstrap seed always give the same numbers, bit for bit, on every machine: the resampling uses
// splitmix64 and a multiply-shift index, never a std:: distribution (whose output differs between
// standard libraries). docs/report.md defines every figure; tests/cli/scripts/report_grid.py
// recomputes them independently from evidence.json.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "report/report_evidence.hpp"
#include "util/json_text.hpp"
#include "util/splitmix64.hpp"

namespace genrepro {

// The bootstrap's seed, recorded in every summary (ReportOptions::bootstrap_seed moves it; the
// command line has no flag for it yet).
inline constexpr uint64_t kDefaultBootstrapSeed = 24;
// 1,000 resamples put the 2.5 % and 97.5 % quantiles 25 draws from the ends: stable to about a
// tenth of the interval's width for the seed counts grids have (5 to 100 per cell).
inline constexpr int kBootstrapResamples = 1000;
inline constexpr double kIntervalLow = 0.025;   // the 95 % percentile interval's ends
inline constexpr double kIntervalHigh = 0.975;
// The n of the repeated-n-gram rate: the greedy section's shortest "repetition" (4 tokens), since
// shorter spans (", the") repeat in any text.
inline constexpr size_t kRepeatedNgram = 4;

// An experiment is a grid when some cell has at least this many runs (seeds): with fewer, an
// interval over seeds says little, and the article's own 3-seed experiment stays run by run.
inline constexpr size_t kMinGridSeeds = 5;

// The q-quantile of sorted values by linear interpolation between order statistics (Hyndman and
// Fan's type 7, numpy's and R's default): h = (n - 1) q, x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h]).
// NaN for no values.
double quantile_sorted(const std::vector<double>& sorted, double q);

// One figure of a cell: its value over the cell's seeds, the bootstrap's 95 % percentile interval,
// and how many seeds it rests on (runs for which the figure is defined). n = 0: every field NaN.
struct Estimate {
  double value = 0;
  double lo = 0;
  double hi = 0;
  size_t n = 0;
};

// What one run contributes to its cell (grid_summary.cpp defines each; docs/report.md too).
struct RunFigures {
  bool eos = false;
  int64_t new_tokens = 0;
  size_t longest_repeat = 0;                 // tokens of the longest span that occurs twice, not overlapping
  std::optional<double> repeated_ngram_rate; // share of its 4-grams seen earlier in the same run (>= 4 tokens)
  std::optional<double> distinct_1;          // distinct tokens / tokens (>= 1 token)
  std::optional<double> distinct_2;          // distinct bigrams / bigrams (>= 2 tokens)
  std::optional<double> chosen_prob;         // mean over steps of the chosen token's probability at T = 1
  bool unique = true;                        // no other run of the cell has the same continuation
};

// The kept-set size at one new token over the cell's runs that reached it.
struct KeptAtStep {
  int64_t step = 0;  // new token, counted from 1
  size_t n = 0;      // runs that reached it
  double median = 0, q1 = 0, q3 = 0;
  double median_lo = 0, median_hi = 0;  // the bootstrap interval of the median
};

// The figures of a cell, by the names the CSV and JSON use, in their order.
inline constexpr const char* kCellFigures[] = {"eos_rate",   "stop_step_median", "unique_share", "longest_repeat",
                                               "repeated_4gram_rate", "distinct_1", "distinct_2", "chosen_prob"};
inline constexpr size_t kCellFigureCount = sizeof kCellFigures / sizeof kCellFigures[0];

struct GridCell {
  size_t index = 0;          // in its grid, in evidence order of the cell's first run
  std::string prompt;
  std::string parameters;    // everything but prompt and seed: "T=1 p=0.9" (colours are fixed by it)
  std::vector<const RunRecord*> runs;  // evidence order
  uint64_t stream_seed = 0;  // the splitmix64 seed of this cell's resampling
  std::vector<RunFigures> per_run;     // parallel to runs
  Estimate figures[kCellFigureCount];  // kCellFigures' order
  double stop_q1 = 0, stop_q3 = 0, stop_min = 0, stop_max = 0;
  size_t distinct_continuations = 0;
  std::vector<KeptAtStep> kept;
};

struct GridSummary {
  std::string experiment;
  std::string document;  // the evidence file's shown name when files are compared (A/B); else empty
  std::vector<GridCell> cells;
  size_t runs = 0;                    // generating runs summarized (every one of the experiment)
  size_t first_prediction_only = 0;   // runs with max_new_tokens = 0: no tokens to summarize
  uint64_t bootstrap_seed = kDefaultBootstrapSeed;
  int resamples = kBootstrapResamples;
};

// One run's figures, alone (unique is left true: it needs the cell).
RunFigures run_figures(const RunRecord& r);
// The longest token span that occurs twice without overlapping: longest_repeat(ids).length
// (token_repeats.hpp, which the greedy section's repetition line uses too).
size_t longest_repeat_length(const std::vector<int64_t>& ids);

// Every experiment whose generating runs have some cell of kMinGridSeeds or more runs, in the order
// experiments first appear. Documents that share run ids (A/B) are summarized each on its own;
// documents that do not (shards of one grid) are pooled. Cell c's resampling stream is splitmix64
// seeded with the (c + 1)-th output of splitmix64(bootstrap_seed).
std::vector<GridSummary> summarize_grids(const std::vector<ReportDocument>& documents, uint64_t bootstrap_seed = kDefaultBootstrapSeed);

// The summaries as `report --json` prints them (docs/report.md), with the files written.
OrderedJson grid_summaries_json(const std::vector<GridSummary>& grids);
// The same numbers as two CSV files (RFC 4180, numbers with 17 significant digits, an empty
// field where n = 0): one row per cell, and one per cell and new token (kept-set sizes).
std::string grid_cells_csv(const std::vector<GridSummary>& grids);
std::string grid_kept_csv(const std::vector<GridSummary>& grids);

}  // namespace genrepro
