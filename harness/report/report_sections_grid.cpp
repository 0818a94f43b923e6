// Grid summaries, drawn: for each experiment grid, two tables and small multiples of the figures
// grid_summary.cpp computed (this file computes nothing but positions and labels). Colours are
// fixed per parameter value over every chart of a grid; facets are prompts; every run is counted.
#include "report/report_section_kit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "report/report_compare.hpp"
#include "report/report_text.hpp"

namespace genrepro::sections {

namespace {

// How each figure of kCellFigures is named on the page and printed.
struct FigureStyle {
  const char* title;    // chart title and table column
  const char* x_label;  // chart axis
  int decimals;
  bool unit_range;      // a share: the axis spans [0, 1]
};

constexpr FigureStyle kStyles[kCellFigureCount] = {
    {"EOS rate", "share of seeds that stopped at EOS", 2, true},
    {"stop step (median)", "new tokens when the run stopped", 1, false},
    {"unique continuations", "share of seeds no other seed of the cell repeats", 2, true},
    {"longest repeat (tokens)", "tokens of the longest span that occurs twice", 1, false},
    {"repeated 4-grams", "share of a run's 4-grams seen earlier in it", 2, true},
    {"distinct-1", "distinct tokens / tokens", 2, true},
    {"distinct-2", "distinct bigrams / bigrams", 2, true},
    {"chosen-token probability", "mean probability of the chosen token (T = 1, no filter)", 2, true},
};

// The SVG file name of each figure's chart, after the grid's stem.
constexpr const char* kStems[kCellFigureCount] = {"eos", "stop", "unique", "repeat", "ngram", "distinct1", "distinct2", "chosen-p"};

std::string estimate_text(const Estimate& e, size_t runs, int decimals) {
  if (e.n == 0) return "n/a (runs too short)";
  std::string text = format_fixed(e.value, decimals);
  text += e.n == 1 ? " (1 seed, no interval)" : " [" + format_fixed(e.lo, decimals) + ", " + format_fixed(e.hi, decimals) + "]";
  if (e.n != runs && e.n > 1) text += " n=" + std::to_string(e.n);
  return text;
}

// Prompts in the order their first cell appears, each with its cells.
std::vector<std::pair<std::string, std::vector<const GridCell*>>> by_prompt(const GridSummary& g) {
  std::vector<std::pair<std::string, std::vector<const GridCell*>>> out;
  for (const GridCell& c : g.cells) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == c.prompt; });
    if (it == out.end()) it = out.insert(out.end(), {c.prompt, {}});
    it->second.push_back(&c);
  }
  return out;
}

// One colour per parameter value, numbered in the order values first appear in the grid, so the
// same value has the same colour in every chart (and prompt) of the grid.
std::map<std::string, std::string> value_colours(const GridSummary& g) {
  std::map<std::string, std::string> colours;
  for (const GridCell& c : g.cells)
    if (!colours.count(c.parameters)) {
      const size_t i = colours.size();
      colours.emplace(c.parameters, palette_color(i));
    }
  return colours;
}

// Tables name prompts by number (the paragraph above them lists them): a prompt in every row
// made each row three lines tall.
void add_tables(Builder& b, const GridSummary& g) {
  const auto prompts = by_prompt(g);
  const auto prompt_number = [&](const std::string& prompt) {
    for (size_t i = 0; i < prompts.size(); ++i)
      if (prompts[i].first == prompt) return std::to_string(i + 1);
    return std::string();
  };
  std::vector<std::string> listed;
  for (size_t i = 0; i < prompts.size(); ++i) listed.push_back(std::to_string(i + 1) + ": " + quoted_token(prompts[i].first));
  b.paragraph("Prompts: " + join(listed, "; ") + ". Each figure: its value over the cell's seeds [95 % interval].");
  ReportTable stop;
  stop.header = {"prompt", "parameters", "seeds", kStyles[0].title, kStyles[1].title, "stop step IQR", "distinct continuations",
                 kStyles[2].title};
  stop.numeric = {true, false, true, true, true, true, true, true};
  ReportTable rep;
  rep.header = {"prompt", "parameters", kStyles[3].title, kStyles[4].title, kStyles[5].title, kStyles[6].title, kStyles[7].title};
  rep.numeric = {true, false, true, true, true, true, true};
  for (const GridCell& c : g.cells) {
    const size_t n = c.runs.size();
    const auto fig = [&](size_t f) { return estimate_text(c.figures[f], n, kStyles[f].decimals); };
    stop.rows.push_back({prompt_number(c.prompt), c.parameters, std::to_string(n), fig(0), fig(1),
                         format_param(c.stop_q1) + "–" + format_param(c.stop_q3),
                         std::to_string(c.distinct_continuations) + " of " + std::to_string(n), fig(2)});
    rep.rows.push_back({prompt_number(c.prompt), c.parameters, fig(3), fig(4), fig(5), fig(6), fig(7)});
  }
  b.table(std::move(stop));
  b.table(std::move(rep));
}

// The kept-set size per new token, one chart per prompt: the median of the cell's seeds as a
// line, the interquartile range as a band, and the article's first-step nucleus where it has one.
void add_kept_charts(const Inputs& in, Builder& b, const GridSummary& g, const std::map<std::string, std::string>& colours,
                     const std::string& stem) {
  const auto prompts = by_prompt(g);
  const OrderedJson* facts = in.options.article_facts ? &*in.options.article_facts : nullptr;
  std::map<const GridCell*, int64_t> article;  // the article's nucleus at the first new token
  std::vector<double> axis;  // one axis for every facet, the article's numbers included
  for (const GridCell& c : g.cells) {
    for (const KeptAtStep& k : c.kept) axis.insert(axis.end(), {k.q1, k.q3, k.median});
    if (!facts) continue;
    if (const auto kept = article_nucleus(*facts, *c.runs[0])) {
      article.emplace(&c, *kept);
      axis.push_back(static_cast<double>(*kept));
    }
  }
  for (size_t p = 0; p < prompts.size(); ++p) {
    LineChartSpec chart;
    chart.title = "Tokens kept, " + quoted_token(prompts[p].first);
    chart.x_label = "new token";
    chart.y_label = "tokens kept (median, IQR; log)";
    chart.log_y = true;
    chart.width = 470;
    for (const GridCell* c : prompts[p].second) {
      LineSeries s;
      s.label = c->parameters + " (" + std::to_string(c->runs.size()) + " seeds)";
      s.color = colours.at(c->parameters);
      for (const KeptAtStep& k : c->kept) {
        s.x.push_back(static_cast<double>(k.step));
        s.y.push_back(k.median);
        s.band_lo.push_back(k.q1);
        s.band_hi.push_back(k.q3);
      }
      chart.series.push_back(std::move(s));
      if (const auto it = article.find(c); it != article.end())
        chart.markers.push_back({1, static_cast<double>(it->second), format_count(it->second)});
    }
    chart.axis_values = axis;
    b.figure(b.figure_name(stem + "-kept"),
             "Kept-set size at each new token over the seeds of each cell: the median (line) and the interquartile range "
             "(band), prompt " + std::to_string(p + 1) + " of " + std::to_string(prompts.size()) +
                 "; the same axis for every prompt." + (chart.markers.empty() ? "" : " Diamonds: the article's first-step nucleus sizes."),
             svg_line_chart(chart), true);
  }
}

void add_forest_charts(Builder& b, const GridSummary& g, const std::map<std::string, std::string>& colours, const std::string& stem) {
  const auto prompts = by_prompt(g);
  for (size_t f = 0; f < kCellFigureCount; ++f) {
    ForestChartSpec chart;
    chart.title = kStyles[f].title;
    chart.x_label = kStyles[f].x_label;
    chart.fixed_x = kStyles[f].unit_range;
    for (const auto& [prompt, cells] : prompts) {
      ForestFacet facet;
      facet.title = quoted_token(prompt);
      for (const GridCell* c : cells) {
        ForestRow row;
        row.label = c->parameters;
        row.color = colours.at(c->parameters);
        const Estimate& e = c->figures[f];
        row.value = e.value;
        row.lo = e.lo;
        row.hi = e.hi;
        const int d = kStyles[f].decimals;
        row.value_label = e.n == 0   ? "n/a"
                          : e.n == 1 ? format_fixed(e.value, d) + " (1 seed)"
                                     : format_fixed(e.value, d) + " [" + format_fixed(e.lo, d) + ", " + format_fixed(e.hi, d) + "]" +
                                           (e.n == c->runs.size() ? "" : " n=" + std::to_string(e.n));
        for (size_t i = 0; i < c->runs.size(); ++i) {
          const RunFigures& r = c->per_run[i];
          const auto opt = [](const std::optional<double>& v) { return v ? *v : std::nan(""); };
          const double values[kCellFigureCount] = {r.eos ? 1.0 : 0.0, static_cast<double>(r.new_tokens), r.unique ? 1.0 : 0.0,
                                                   static_cast<double>(r.longest_repeat), opt(r.repeated_ngram_rate),
                                                   opt(r.distinct_1), opt(r.distinct_2), opt(r.chosen_prob)};
          row.points.push_back(values[f]);
        }
        facet.rows.push_back(std::move(row));
      }
      chart.facets.push_back(std::move(facet));
    }
    b.figure(b.figure_name(stem + "-" + kStems[f]),
             std::string(kStyles[f].title) + " per cell: the estimate (dot), its 95 % bootstrap interval (line), every seed's own "
                                             "value (small dots); n = the seeds it rests on where fewer than the cell's (the tables give each cell's seeds).",
             svg_forest_chart(chart), true);
  }
}

}  // namespace

void add_grid_summaries(const Inputs& in, Builder& b) {
  if (in.grids.empty()) return;
  b.heading("Grid summaries");
  b.paragraph("Each experiment grid aggregated over its seeds, per cell: one prompt and one set of every other parameter value. "
              "Every figure has a 95 % bootstrap interval (percentile, " + format_count(kBootstrapResamples) +
              " resamples of the cell's seeds, splitmix64 seeded with " + std::to_string(in.grids[0].bootstrap_seed) +
              ") and the number of seeds it rests on. Each parameter value keeps its colour in every chart. "
              "The same numbers: grid-cells.csv, grid-kept-per-step.csv and report --json (docs/report.md).");
  for (size_t gi = 0; gi < in.grids.size(); ++gi) {
    const GridSummary& g = in.grids[gi];
    b.heading("Grid " + quoted_token(g.experiment) + (g.document.empty() ? "" : " in " + g.document), 3);
    size_t least = g.cells[0].runs.size(), most = least;
    for (const GridCell& c : g.cells) least = std::min(least, c.runs.size()), most = std::max(most, c.runs.size());
    const size_t prompts = by_prompt(g).size();
    b.paragraph(format_count(static_cast<int64_t>(g.runs)) + " runs, all counted, in " + std::to_string(g.cells.size()) + (g.cells.size() == 1 ? " cell (" : " cells (") +
                std::to_string(prompts) + " prompt" + (prompts == 1 ? "" : "s") + " x " + std::to_string(value_colours(g).size()) +
                " parameter values), " + (least == most ? std::to_string(least) : std::to_string(least) + " to " + std::to_string(most)) +
                " seeds per cell.");
    // Copies of one run (replicas) share their seed; summarized as the cell's samples all the same.
    if (std::any_of(g.cells.begin(), g.cells.end(), [](const GridCell& c) {
          return std::any_of(c.runs.begin(), c.runs.end(), [](const RunRecord* r) { return r->params.replica > 0; });
        }))
      b.note("This experiment repeats runs (replicas): copies of one run share its seed and count here as seeds of their "
             "cell, so \"distinct continuations\" is how many completions the identical copies gave (docs/sensitivity.md).");
    if (g.first_prediction_only)
      b.note(std::to_string(g.first_prediction_only) + " run(s) of this experiment record only the first prediction "
             "(max_new_tokens = 0): they have no tokens to summarize (their nucleus sizes are in \"Nucleus sizes\").");
    if (in.options.article_facts == std::nullopt)
      b.note("With --article golden/article/article-facts.json the article's first-step nucleus sizes (35 / 1,279 / 14,905 "
             "at T = 0.5 / 1 / 2, p = 0.9, for its prompt) are drawn on the kept-set charts of the cells they belong to.");
    add_tables(b, g);
    const auto colours = value_colours(g);
    const std::string stem = "grid-" + std::to_string(gi + 1);
    add_kept_charts(in, b, g, colours, stem);
    add_forest_charts(b, g, colours, stem);
  }
}

}  // namespace genrepro::sections
