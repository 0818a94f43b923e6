#include "report/sensitivity_page.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "report/report_section_kit.hpp"
#include "util/significant_digits.hpp"

namespace genrepro {

namespace {

constexpr std::size_t kSensColumnLabelFits = 26;  // report_svg.cpp's column labels


std::string sens_page_optional(const std::optional<double>& v) { return v ? three_digits(*v) : "-"; }

// A column's label: the cell's name when it fits; else what the cell changed (one factor at a
// time: "threads=2"), "reference" for the reference; the tooltip always has the whole name.
std::string sens_column_label(const SensitivityMatrix& m, std::size_t c) {
  const std::string& name = m.cells[c].name;
  if (name.size() <= kSensColumnLabelFits) return name;
  if (c == m.reference) return "reference";
  for (const AxisEffect& a : m.attribution)
    if (a.cell == name) return a.axis + "=" + a.value;
  return name;
}

// What the legend and the heatmap both call cell c: its column label, and "(reference)" where the
// label does not say so already.
std::string sens_series_label(const SensitivityMatrix& m, std::size_t c) {
  const std::string label = sens_column_label(m, c);
  return c == m.reference && label != "reference" ? label + " (reference)" : label;
}

// A run's row: its prompt and its parameters as every report page labels a run (the parameter
// table's label_parts, "p0 T=1 top_p=0.9 seed=43"); where two runs of one experiment would read
// alike (copies, runs that differ only in what a label leaves out), their ids instead.
std::vector<std::string> sens_row_labels(const SensitivityMatrix& m) {
  const Evidence& ref = m.cells[m.reference].evidence.evidence;
  std::vector<std::string> labels;
  std::map<std::pair<std::string, std::string>, std::size_t> seen;
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    const RunRecord& r = ref.runs[i];
    const std::string label = "p" + std::to_string(r.prompt_index) + " " + sections::run_label(r);
    labels.push_back(label);
    ++seen[{r.experiment, label}];
  }
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    const RunRecord& r = ref.runs[i];
    if (seen[{r.experiment, labels[i]}] == 1) continue;
    // Under its experiment's heading a run's id need not repeat the experiment ("greedy/p0/..." -> "p0/...").
    const std::string& id = m.run_ids[i];
    const std::string& experiment = r.experiment;
    const bool prefixed = !experiment.empty() && id.size() > experiment.size() + 1 && id.compare(0, experiment.size() + 1, experiment + "/") == 0;
    labels[i] = prefixed ? id.substr(experiment.size() + 1) : id;
  }
  return labels;
}

std::string sens_cell_tooltip(const SensitivityMatrix& m, std::size_t run, std::size_t c) {
  const RunVsReference& r = m.runs[run][c];
  std::string t = m.run_ids[run] + " in " + m.cells[c].name + (c == m.reference ? " (the reference)" : "") + ": ";
  switch (r.cls) {
    case CellClass::identical:
      return t + (r.logits == LogitsCheck::equal ? "identical, logits proven equal by their digests"
                                                 : "identical in every recorded value (no logits digests to compare)");
    case CellClass::same_tokens:
      return t + "same tokens, different bits (largest |Δ probability| " + three_digits(r.max_prob_delta) + ", |Δ logit margin| " +
             three_digits(r.max_logit_margin_delta) + (r.logits == LogitsCheck::differ ? "; logits digests differ" : "") + ")";
    case CellClass::diverged: {
      // A sampled step is decided by its draw: say how close the reference's draw came to the other token.
      const std::string draw = r.reference_draw ? "; the reference's draw margin " + three_digits(r.reference_draw->margin) +
                                                      " (runner-up " + std::to_string(r.reference_draw->runner_up) + ")"
                                                : std::string();
      return t + "diverged at new token " + std::to_string(r.diverged_at + 1) + " (logit margin: reference " +
             three_digits(r.reference_logit_margin) + ", this cell " + three_digits(r.cell_logit_margin) + draw + "; its pick " +
             (r.rank_in_reference ? "was the reference's rank " + std::to_string(*r.rank_in_reference) : std::string("not among the reference's candidates")) +
             ")";
    }
    case CellClass::missing: return t + "missing (the cell has no run with this id)";
  }
  return t;
}

void sens_add_class_shares(const SensitivityMatrix& m, sections::Builder& out) {
  const std::size_t n = m.run_ids.size();
  std::vector<std::vector<std::string>> rows;
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    const CellSummary& s = m.summaries[c];
    const auto& core = m.cells[c].evidence.evidence.environment.blas.core;
    rows.push_back({m.cells[c].name + (c == m.reference ? " (reference)" : ""), sensitivity_axes_text(m.cells[c].axes), core ? *core : "-",
                    sensitivity_share_text(s.identical, n), std::to_string(s.identical_logits_equal), sensitivity_share_text(s.same_tokens, n),
                    sensitivity_share_text(s.diverged, n), std::to_string(s.missing)});
  }
  out.heading("Classes per cell");
  out.table(ReportTable{{"cell", "axes", "BLAS kernel", "identical", "of which logits proven equal", "same tokens", "diverged", "missing"},
                        {false, false, false, true, true, true, true, true}, rows, {}, {}});
}

void sens_add_attribution(const SensitivityMatrix& m, sections::Builder& out) {
  out.heading("One factor at a time");
  if (m.attribution.empty()) {
    out.paragraph("No cell differs from the reference in exactly one axis, so no axis can be blamed alone.");
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const AxisEffect& a : m.attribution)
    rows.push_back({a.axis, a.value, a.cell, std::to_string(a.runs), std::to_string(a.same_tokens), std::to_string(a.diverged)});
  out.paragraph("Each cell that changed exactly one axis from the reference: how many of its runs that axis, "
                "changed alone, turned into same tokens or diverged.");
  out.table(ReportTable{{"axis", "value", "cell", "runs", "same tokens", "diverged"}, {false, false, false, true, true, true}, rows, {}, {}});
}

void sens_add_predictor(const SensitivityMatrix& m, sections::Builder& out) {
  const MarginPredictor& p = m.predictor;
  out.heading("The margin that predicts a flip");
  if (!p.m_star) {
    out.paragraph("No run diverged in any cell: there is no flip to predict. The largest |Δ logit margin| on matched "
                "steps (the noise floor) was " + three_digits(p.noise_floor) + ".");
    return;
  }
  out.table(ReportTable{
      {"figure", "value"}, {false, true},
      {{"flips ((run, cell) divergences)", std::to_string(p.flips)},
       {"reference steps where some cell flipped", std::to_string(p.flip_steps) + " of " + std::to_string(p.steps)},
       {"noise floor (largest |Δ logit margin| on matched steps)", three_digits(p.noise_floor)},
       {"m* (the largest reference margin at a flip: logit margin, or T x draw margin when sampled)", three_digits(*p.m_star)},
       {"steps flagged by \"margin <= m*\" (share)", std::to_string(p.flagged) + " (" + sensitivity_share_text(p.flagged, p.steps) + ")"},
       {"MarginGate (2026): trigger rate that restores determinism", "15-50 %"},
       {"precision (flagged steps that flipped)", three_digits(p.precision())},
       {"recall on the cells it was fitted to (1 by construction)", three_digits(p.recall())}},
      {},
      {}});
  out.paragraph("m* is fitted to these cells, so its recall on them is 1 by construction; the next section judges "
                "it on cells it was not fitted to.");
}

void sens_add_held_out(const SensitivityMatrix& m, sections::Builder& out) {
  const HeldOutPredictor& h = m.held_out;
  out.heading("The predictor on held-out cells");
  out.paragraph(held_out_summary(h));
  if (!h.enough()) return;
  std::vector<std::vector<std::string>> rows;
  for (const HeldOutCell& c : h.cells)
    rows.push_back({c.cell, sens_page_optional(c.m_star), std::to_string(c.flips), std::to_string(c.caught), sens_page_optional(c.recall()),
                    std::to_string(c.flagged) + " of " + std::to_string(c.steps) + " (" + sensitivity_share_text(c.flagged, c.steps) + ")",
                    sens_page_optional(c.precision())});
  out.table(ReportTable{{"held-out cell", "m* without it", "flips", "caught", "recall", "flagged steps", "precision"},
                        {false, true, true, true, true, true, true}, rows, {}, {}});
}

// The classic nondeterminism experiment: identical runs and how many completions each cell made of them.
void sens_add_replica_groups(const SensitivityMatrix& m, sections::Builder& out) {
  if (m.replica_groups.empty()) return;
  out.heading("Identical runs, distinct completions");
  out.paragraph("Copies of one run (the experiment's replicas) can differ only through the arithmetic around them, such "
                "as the rows of an inexact batch. Per cell: how many distinct completions the copies gave (1: every copy the same).");
  std::vector<std::string> header = {"run (copy 0)", "copies"};
  std::vector<bool> numeric = {false, true};
  for (const SensitivityCell& c : m.cells) {
    header.push_back(c.name);
    numeric.push_back(false);
  }
  std::vector<std::vector<std::string>> rows;
  for (const ReplicaGroup& g : m.replica_groups) {
    std::vector<std::string> row = {g.run, std::to_string(g.copies)};
    for (std::size_t c = 0; c < m.cells.size(); ++c) row.push_back(replica_group_cell_text(g, c));
    rows.push_back(std::move(row));
  }
  out.table(ReportTable{header, numeric, rows, {}, {}});
}

}  // namespace

const char* class_color(CellClass c) {
  switch (c) {
    case CellClass::identical: return "#009e73";
    case CellClass::same_tokens: return "#f0e442";
    case CellClass::diverged: return "#d55e00";
    case CellClass::missing: return "#bbbbbb";
  }
  return "#ffffff";
}

HeatmapSpec sensitivity_heatmap(const SensitivityMatrix& m) {
  HeatmapSpec h;
  h.title = "Every run in every cell, against the reference";
  for (std::size_t c = 0; c < m.cells.size(); ++c) h.columns.push_back(sens_column_label(m, c));
  const Evidence& ref = m.cells[m.reference].evidence.evidence;
  const std::vector<std::string> labels = sens_row_labels(m);
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    h.rows.push_back(labels[i]);
    h.row_groups.push_back("experiment " + ref.runs[i].experiment);
    std::vector<HeatmapCell> row;
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
      const RunVsReference& r = m.runs[i][c];
      row.push_back({class_color(r.cls), r.cls == CellClass::diverged ? std::to_string(r.diverged_at + 1) : "", sens_cell_tooltip(m, i, c)});
    }
    h.cells.push_back(std::move(row));
  }
  h.legend = {{"identical", class_color(CellClass::identical)},
              {"same tokens, different bits", class_color(CellClass::same_tokens)},
              {"diverged (N: at new token N)", class_color(CellClass::diverged)},
              {"missing", class_color(CellClass::missing)}};
  return h;
}

LineChartSpec sensitivity_survival_chart(const SensitivityMatrix& m) {
  LineChartSpec chart;
  chart.title = "Survival: runs still agreeing with the reference";
  chart.x_label = "new tokens t";
  chart.y_label = "share of runs agreeing";
  chart.fixed_y = true;
  chart.y_min = 0;
  chart.y_max = 1;
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    LineSeries s;
    s.label = sens_series_label(m, c);
    const std::vector<double>& y = m.summaries[c].survival;
    // A step function: the share holds from one new token to the next and drops at a divergence.
    for (std::size_t t = 0; t < y.size(); ++t) {
      if (t > 0) {
        s.x.push_back(double(t));
        s.y.push_back(y[t - 1]);
      }
      s.x.push_back(double(t));
      s.y.push_back(y[t]);
    }
    chart.series.push_back(std::move(s));
  }
  // Lines that coincide would hide one another: each after the first of its group is dashed, in
  // its own pattern, so the solid one below shows through its gaps.
  const char* const dashes[] = {"8 4", "3 3", "1 3", "10 3 2 3", "5 2 1 2"};
  for (const std::vector<std::size_t>& group : coinciding_survival_lines(m))
    for (std::size_t k = 1; k < group.size(); ++k) {
      LineSeries& s = chart.series[group[k]];
      s.color = palette_color(group[k]);
      s.dash = dashes[(k - 1) % (sizeof dashes / sizeof dashes[0])];
    }
  return chart;
}

std::vector<std::vector<std::size_t>> coinciding_survival_lines(const SensitivityMatrix& m) {
  std::vector<std::vector<std::size_t>> groups;
  std::vector<bool> placed(m.cells.size(), false);
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    if (placed[c]) continue;
    std::vector<std::size_t> group = {c};
    for (std::size_t d = c + 1; d < m.cells.size(); ++d)
      if (!placed[d] && m.summaries[d].survival == m.summaries[c].survival) {
        group.push_back(d);
        placed[d] = true;
      }
    if (group.size() > 1) groups.push_back(std::move(group));
  }
  return groups;
}

ReportContent sensitivity_page_content(const SensitivityMatrix& m) {
  ReportContent page;
  page.title = "Numerics sensitivity";
  sections::Builder b(page);
  b.paragraph(std::to_string(m.run_ids.size()) + " runs in " + std::to_string(m.cells.size()) +
              " cells, each against the same run of the reference cell " + m.cells[m.reference].name +
              ". identical: every recorded value equal bit for bit, and the full logits too where both cells "
              "recorded their digests; same tokens: the same ids, some recorded value or the logits different; diverged: a different token at the new token named; missing: the cell has no "
              "run with that id (docs/sensitivity.md).");
  b.contents();
  b.heading("Runs by cells");
  b.figure("sensitivity-heatmap.svg",
           "One row per run (grouped by experiment), one column per cell; the colour is the run's class in that "
           "cell, and a diverged cell names the new token where it parted. Hover a cell for its margins.",
           svg_heatmap(sensitivity_heatmap(m)));
  b.heading("Survival");
  std::string coinciding;
  for (const std::vector<std::size_t>& group : coinciding_survival_lines(m)) {
    std::string names;
    for (std::size_t k = 0; k < group.size(); ++k)
      names += (k == 0 ? "" : k + 1 == group.size() ? " and " : ", ") + sens_series_label(m, group[k]);
    coinciding += " Drawn on one another (the dashed over the solid): " + names + ".";
  }
  b.figure("sensitivity-survival.svg",
           "Per cell, the share of its runs whose tokens still agree with the reference after t new tokens. A "
           "line at 1 throughout is a cell where no run diverged." + coinciding,
           svg_line_chart(sensitivity_survival_chart(m)));
  sens_add_class_shares(m, b);
  sens_add_attribution(m, b);
  sens_add_predictor(m, b);
  sens_add_held_out(m, b);
  sens_add_replica_groups(m, b);
  assign_anchors(page);
  return page;
}

std::string sensitivity_html(const SensitivityMatrix& m) { return render_html(sensitivity_page_content(m)); }

}  // namespace genrepro
