#pragma once
// What every report section shares: what a run is (greedy, sampled, filtered), how runs are
// grouped and labelled, and the builder that appends blocks. One section per file beside this
// one (report_sections_*.cpp); report_sections.cpp puts them in the article's order.
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "report/report_document.hpp"
#include "report/report_svg.hpp"

namespace genrepro::sections {

using Runs = std::vector<const RunRecord*>;

// ---- what a run is ----

inline bool is_first_prediction_only(const RunRecord& r) { return r.params.max_new_tokens == 0; }
inline bool is_generating(const RunRecord& r) { return r.params.max_new_tokens > 0; }
inline bool is_greedy(const RunRecord& r) { return r.params.sampling.mode == DecodeMode::greedy; }
inline bool is_sampled(const RunRecord& r) { return r.params.sampling.mode == DecodeMode::sample; }
inline bool has_top_k(const RunRecord& r) { return r.params.sampling.top_k > 0; }
inline bool has_top_p(const RunRecord& r) { return r.params.sampling.top_p < 1; }
// A run whose first step shows softmax(logits / T) at a meaningful temperature.
bool has_scaled_first_step(const RunRecord& r);
bool default_order(const RunRecord& r);

std::string join(const std::vector<std::string>& parts, const std::string& sep);
// The run's sampler order as its stage names joined by `sep`: "top_k → top_p → temperature".
std::string order_text(const RunRecord& r, const std::string& sep = " → ");

// Which parameters a grouping key leaves out.
enum KeyIgnore : unsigned {
  kKeepAll = 0,
  kIgnoreTemperature = 1u << 0,
  kIgnoreSeed = 1u << 1,
  kIgnoreOrder = 1u << 2,
  kIgnoreLength = 1u << 3,  // max_new_tokens and stop_at_eos: they do not change the first step
};

// Runs grouped by every parameter that can change what a run produces, except those `ignore`
// names; groups and their runs in evidence order.
std::vector<Runs> group_by(const Runs& runs, unsigned ignore);
Runs select(const Runs& runs, bool (*pred)(const RunRecord&));
// "T=1 p=0.9 seed=43" (only what is set), for legends, labels and table rows.
std::string run_label(const RunRecord& r, unsigned omit = kKeepAll);
std::string stop_text(const RunRecord& r);
std::string ordinal(int64_t n);
// "identical (50 tokens)" or "first differs at new token 3".
std::string compare_outputs(const RunRecord& a, const RunRecord& b);
std::string first_step_token(const RunRecord& r, size_t step);
std::string or_not_recorded(const std::optional<std::string>& v);
std::string or_not_recorded(const std::string& v);

// ---- building blocks ----

class Builder {
 public:
  explicit Builder(ReportContent& out) : out_(out) {}
  void heading(const std::string& text, int level = 2) { add(ReportBlock::Kind::heading, text).level = level; }
  void paragraph(const std::string& text) { add(ReportBlock::Kind::paragraph, text); }
  void note(const std::string& text) { add(ReportBlock::Kind::note, text); }
  void banner(const std::string& text) { add(ReportBlock::Kind::banner, text); }
  void contents() { add(ReportBlock::Kind::contents, ""); }
  void generated(const std::string& text) { add(ReportBlock::Kind::generated_text, text); }
  void table(ReportTable t) { add(ReportBlock::Kind::table, "").table = std::move(t); }
  void figure(const std::string& file, const std::string& caption, std::string svg, bool half = false) {
    add(ReportBlock::Kind::figure, "").figure = ReportFigure{file, caption, std::move(svg), half};
  }
  // A folded part (HTML <details>): the summary line shows, the blocks until fold_end do not
  // until opened. For run-by-run listings that a grid's summaries already cover.
  void fold_begin(const std::string& summary) { add(ReportBlock::Kind::fold_begin, summary); }
  void fold_end() { add(ReportBlock::Kind::fold_end, ""); }
  // A file name not used yet: "nucleus-sizes.svg", then "nucleus-sizes-2.svg", ...
  std::string figure_name(const std::string& stem) {
    const int n = ++figure_counts_[stem];
    return n == 1 ? stem + ".svg" : stem + "-" + std::to_string(n) + ".svg";
  }

 private:
  ReportBlock& add(ReportBlock::Kind kind, const std::string& text) {
    ReportBlock b;
    b.kind = kind;
    b.text = text;
    out_.blocks.push_back(std::move(b));
    return out_.blocks.back();
  }
  ReportContent& out_;
  std::map<std::string, int> figure_counts_;
};

struct Inputs {
  const std::vector<ReportDocument>& documents;
  const ReportOptions& options;
  const std::vector<GridSummary>& grids;  // summarize_grids: experiments with many seeds per cell
  Runs runs;  // every run of every document, in order
  std::map<const RunRecord*, size_t> document_of;
  std::set<const RunRecord*> grid_runs;  // every run a grid summary counts

  // Run-by-run sections fold such runs away: the grid's summaries show them.
  bool in_grid(const RunRecord& r) const { return grid_runs.count(&r) > 0; }
  bool all_in_grid(const Runs& runs) const {
    for (const RunRecord* r : runs)
      if (!in_grid(*r)) return false;
    return !runs.empty();
  }

  const ReportDocument& document(const RunRecord& r) const { return documents[document_of.at(&r)]; }
  std::string legend(const RunRecord& r) const {
    return documents.size() > 1 ? run_label(r) + " [" + document(r).shown() + "]" : run_label(r);
  }
};

// One chart, or small multiples when there are more series than a panel holds: panels share
// their y axis and are numbered in the title ("(panel 2 of 3)"). `stem` names the SVG files.
void add_line_figures(Builder& b, const LineChartSpec& chart, const std::string& stem, const std::string& caption);

// ---- the sections, each in its own file ----

// report_sections_parity.cpp: two engines' runs of the same experiments (engine_parity.hpp).
void add_engine_parity(const Inputs& in, Builder& b);
// report_sections_grid.cpp: one summary per experiment grid (grid_summary.hpp's numbers, drawn).
void add_grid_summaries(const Inputs& in, Builder& b);
// report_sections_loop.cpp: the fixture banner, the introduction, greedy decoding's repetition.
void add_fixture_banner(const Inputs& in, Builder& b);
void add_intro(const Inputs& in, Builder& b);
void add_greedy(const Inputs& in, Builder& b);
// report_sections_temperature.cpp: the first prediction at several temperatures, sampled runs.
void add_first_prediction(const Inputs& in, Builder& b);
void add_temperature(const Inputs& in, Builder& b);
// report_sections_filters.cpp: top-p's nucleus sizes and the sampler order.
void add_nucleus(const Inputs& in, Builder& b);
void add_sampler_order(const Inputs& in, Builder& b);
// report_sections_runs.cpp: seeds, stopping, the step charts and every run.
void add_seeds(const Inputs& in, Builder& b);
void add_stopping(const Inputs& in, Builder& b);
void add_step_charts(const Inputs& in, Builder& b);
void add_all_runs(const Inputs& in, Builder& b);
// report_sections_sources.cpp: where the evidence came from.
void add_sources(const Inputs& in, Builder& b);

}  // namespace genrepro::sections
