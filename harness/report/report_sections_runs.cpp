// Seeds, stopping, the step-by-step charts and every run (the article's "Seeds" and "Stopping").
#include "report/report_section_kit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "report/report_compare.hpp"
#include "report/report_text.hpp"

namespace genrepro::sections {

namespace {

// More lines than this make a step chart unreadable; the rest are listed in a note.
constexpr size_t kMaxChartSeries = 16;

}  // namespace

void add_seeds(const Inputs& in, Builder& b) {
  b.heading("The same parameters with different seeds");
  std::vector<Runs> groups;
  for (const Runs& group : group_by(select(in.runs, is_generating), kIgnoreSeed)) {
    std::set<uint64_t> seeds;
    for (const RunRecord* r : group) seeds.insert(r->params.sampling.seed);
    if (seeds.size() > 1 && is_sampled(*group[0])) groups.push_back(group);
  }
  if (groups.empty()) {
    b.note("Not in this evidence: no sampled runs that differ only in their seed.");
    return;
  }
  for (const Runs& group : groups) {
    // A grid's cell is summarized in "Grid summaries"; its seeds, run by run, are folded here.
    const bool fold = std::all_of(group.begin(), group.end(), [&](const RunRecord* r) { return in.in_grid(*r); });
    if (fold)
      b.fold_begin(quoted_token(group[0]->prompt) + " " + run_label(*group[0], kIgnoreSeed) + ": " + std::to_string(group.size()) +
                   " seeds, run by run (summarized in Grid summaries)");
    b.paragraph(run_label(*group[0], kIgnoreSeed) + ", up to " + std::to_string(group[0]->params.max_new_tokens) +
                " new tokens, " + std::to_string(group.size()) + " seeds. Once one token differs, every later "
                "prediction sees a different context.");
    ReportTable t;
    t.header = {"seed", "stop", "compared with seed " + std::to_string(group[0]->params.sampling.seed), "run"};
    t.numeric = {true, false, false, false};
    for (const RunRecord* r : group) {
      t.rows.push_back({std::to_string(r->params.sampling.seed), stop_text(*r),
                        r == group[0] ? "(reference)" : compare_outputs(*r, *group[0]), r->id});
    }
    b.table(std::move(t));
    for (const RunRecord* r : group) {
      b.paragraph("seed " + std::to_string(r->params.sampling.seed) + ":");
      b.generated(r->text);
    }
    if (fold) b.fold_end();
  }
}

void add_stopping(const Inputs& in, Builder& b) {
  b.heading("How the runs stopped");
  const Runs all_generating = select(in.runs, is_generating);
  if (all_generating.empty()) {
    b.note("Not in this evidence: no run with max_new_tokens > 0.");
    return;
  }
  // Runs of grids first as their own folded listing: their stops are summarized per cell.
  Runs generating, gridded;
  for (const RunRecord* r : all_generating) (in.in_grid(*r) ? gridded : generating).push_back(r);
  if (!gridded.empty()) {
    size_t eos = 0;
    for (const RunRecord* r : gridded) eos += r->result.stop_reason == StopReason::eos;
    b.paragraph(format_count(static_cast<int64_t>(gridded.size())) + " runs of grids: " + format_count(static_cast<int64_t>(eos)) +
                " stopped at EOS. Their EOS rates and stop steps per cell are in Grid summaries.");
    b.fold_begin("How each of the " + format_count(static_cast<int64_t>(gridded.size())) + " runs of grids stopped, run by run");
    ReportTable g;
    g.header = {kRunIdColumn, "parameters", "limit", "stop reason", "new tokens"};
    g.numeric = {false, false, true, false, true};
    for (const RunRecord* r : gridded)
      g.rows.push_back({r->id, in.legend(*r), std::to_string(r->params.max_new_tokens), to_string(r->result.stop_reason),
                        std::to_string(r->result.stop_step)});
    b.table(std::move(g));
    b.fold_end();
  }
  if (generating.empty()) return;
  ReportTable t;
  t.header = {"run", "parameters", "limit", "stop reason", "new tokens", "last token"};
  t.numeric = {false, false, true, false, true, false};
  const OrderedJson* facts = in.options.article_facts ? &*in.options.article_facts : nullptr;
  if (facts) {  // the article's stop beside the evidence's (--article)
    t.header.insert(t.header.end(), {"the article", "same as the article"});
    t.numeric.insert(t.numeric.end(), {false, false});
  }
  for (const RunRecord* r : generating) {
    const auto& out = r->result.output_ids;
    const std::string last = r->result.steps.empty()
                                 ? (out.empty() ? "" : "id " + std::to_string(out.back()))
                                 : first_step_token(*r, r->result.steps.size() - 1) +
                                       (out.empty() ? "" : " (id " + std::to_string(out.back()) + ")");
    std::vector<std::string> row = {r->id, in.legend(*r), std::to_string(r->params.max_new_tokens), to_string(r->result.stop_reason),
                                    std::to_string(r->result.stop_step), last};
    if (facts) {
      const std::optional<std::string> article = article_stop(*facts, *r);
      const bool differs = article && *article != stop_as_article_says(*r);
      row.insert(row.end(), {article.value_or(""), article ? (differs ? "no" : "yes") : "not given"});
      t.marked.resize(t.rows.size() + 1);
      t.marked.back().assign(row.size(), false);
      t.marked.back().back() = differs;
    }
    t.rows.push_back(std::move(row));
  }
  b.table(std::move(t));
  bool any_eos = false;
  for (const RunRecord* r : generating) {
    if (r->result.stop_reason != StopReason::eos) continue;
    any_eos = true;
    const int64_t eos = in.document(*r).evidence.model.eos_token_id;
    const auto& out = r->result.output_ids;
    const std::string check = (out.empty() || out.back() != eos)
                                  ? " Its last token is not the model's EOS id " + std::to_string(eos) + ": the evidence is inconsistent."
                                  : " The token is the model's EOS id " + std::to_string(eos) + " (from its config).";
    b.paragraph(in.legend(*r) + " selected EOS as its " + ordinal(r->result.stop_step) + " new token, before the limit of " +
                std::to_string(r->params.max_new_tokens) + "." + check);
  }
  if (!any_eos) b.note("No run in this evidence stopped at EOS; every run reached its limit (or the context's end).");
}

void add_step_charts(const Inputs& in, Builder& b) {
  b.heading("Step by step");
  Runs stepped;
  for (const RunRecord* r : in.runs) if (is_generating(*r) && r->result.steps.size() > 1) stepped.push_back(r);
  // More runs than a chart shows: the runs of grids leave, since Grid summaries draws every one of
  // them per cell (kept-set median and interquartile band), rather than be cut after the 16th.
  if (stepped.size() > kMaxChartSeries) {
    Runs alone;
    for (const RunRecord* r : stepped) if (!in.in_grid(*r)) alone.push_back(r);
    if (alone.size() < stepped.size())
      b.note(format_count(static_cast<int64_t>(stepped.size() - alone.size())) +
             " runs of grids are drawn per cell in Grid summaries, not one by one here.");
    stepped = std::move(alone);
    if (stepped.empty()) return;
  }
  const Runs sampled = select(stepped, is_sampled);
  // With several prompts a legend names the prompt too: "T=1 seed=1" alone names a run in each.
  std::set<std::string> prompts;
  for (const RunRecord* r : stepped) prompts.insert(r->prompt);
  const auto label = [&](const RunRecord& r) { return prompts.size() > 1 ? in.legend(r) + " " + quoted_token(r.prompt) : in.legend(r); };
  // A run keeps one colour in both charts (and every panel): its position among the stepped runs.
  std::map<const RunRecord*, size_t> position;
  for (const RunRecord* r : stepped) position.emplace(r, position.size());
  const auto styled = [&](const RunRecord& r) {
    LineSeries s;
    s.label = label(r);
    s.color = palette_color(position.at(&r));
    s.dash = palette_dash(position.at(&r));
    return s;
  };
  if (stepped.empty()) {
    b.note("Not in this evidence: no run with more than one recorded step.");
    return;
  }
  const auto capped = [&](const Runs& runs, const std::string& what) {
    if (runs.size() > kMaxChartSeries) {
      b.note(what + ": showing the first " + std::to_string(kMaxChartSeries) + " of " + std::to_string(runs.size()) + " runs.");
      return Runs(runs.begin(), runs.begin() + kMaxChartSeries);
    }
    return runs;
  };
  if (sampled.empty()) {
    b.note("Not in this evidence: no sampled run with more than one step, so there is no kept-set chart.");
  } else {
    LineChartSpec kept;
    kept.title = "Tokens kept by the sampler chain at each step";
    kept.x_label = "new token";
    kept.y_label = "tokens kept (log scale)";
    kept.log_y = true;
    for (const RunRecord* r : capped(sampled, "Kept-set chart")) {
      LineSeries s = styled(*r);
      for (const StepRecord& st : r->result.steps) {
        s.x.push_back(static_cast<double>(st.step + 1));
        s.y.push_back(static_cast<double>(st.kept));
      }
      kept.series.push_back(std::move(s));
    }
    add_line_figures(b, kept, "kept-per-step",
                     "Kept-set size at each step of each sampled run (log scale). A dot marks where a run stopped.");
  }
  LineChartSpec prob;
  prob.title = "Probability of the chosen token at each step";
  prob.x_label = "new token";
  prob.y_label = "probability under the model (T = 1, no filter)";
  prob.fixed_y = true;
  prob.y_min = 0;
  prob.y_max = 1;
  for (const RunRecord* r : capped(stepped, "Chosen-token chart")) {
    LineSeries s = styled(*r);
    s.emphasized = is_greedy(*r);
    for (const StepRecord& st : r->result.steps) {
      s.x.push_back(static_cast<double>(st.step + 1));
      s.y.push_back(st.prob_t1);
    }
    prob.series.push_back(std::move(s));
  }
  add_line_figures(b, prob, "chosen-token-probability",
                   "Probability of each chosen token under the model itself (softmax(logits), T = 1, no filter), greedy runs drawn thicker.");
}

void add_all_runs(const Inputs& in, Builder& b) {
  b.heading("All runs");
  if (in.runs.empty()) {
    b.note("The evidence holds no runs.");
    return;
  }
  std::vector<std::string> experiments;
  for (const RunRecord* r : in.runs) {
    if (std::find(experiments.begin(), experiments.end(), r->experiment) == experiments.end()) experiments.push_back(r->experiment);
  }
  for (const std::string& name : experiments) {
    b.heading(experiment_heading(name), 3);
    Runs runs;
    for (const RunRecord* r : in.runs) if (r->experiment == name) runs.push_back(r);
    // A grid's runs, one by one, are folded: its summaries above are the view of many seeds.
    const bool fold = std::any_of(runs.begin(), runs.end(), [&](const RunRecord* r) { return in.in_grid(*r); });
    if (fold) b.fold_begin("All " + format_count(static_cast<int64_t>(runs.size())) + " runs of " + quoted_token(name) + ", one by one");
    ReportTable t;
    t.header = {"#", kRunIdColumn, "mode", "T", "top-k", "top-p", "seed", "sampler order", "limit", "stop", "new tokens"};
    t.numeric = {true, false, false, true, true, true, true, false, true, false, true};
    for (const RunRecord* r : runs) {
      const auto& s = r->params.sampling;
      t.rows.push_back({std::to_string(r->index), r->id, to_string(s.mode), format_param(s.temperature),
                        has_top_k(*r) ? std::to_string(s.top_k) : "off", has_top_p(*r) ? format_param(s.top_p) : "off",
                        std::to_string(s.seed), order_text(*r), std::to_string(r->params.max_new_tokens),
                        to_string(r->result.stop_reason), std::to_string(r->result.stop_step)});
    }
    b.table(std::move(t));
    for (const RunRecord* r : runs) {
      if (!is_generating(*r)) continue;
      b.paragraph(r->id + " (" + in.legend(*r) + "): " + stop_text(*r) + ".");
      b.generated(r->text);
    }
    if (fold) b.fold_end();
  }
}

}  // namespace genrepro::sections
