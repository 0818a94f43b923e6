// Kept set per stage: the frameworks' chains stage by stage (docs/sampling.md, "Each step records
// its stages"; docs/report.md).
#include "report/report_sections_stages.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "params/framework_params.hpp"
#include "report/report_text.hpp"
#include "util/json_text.hpp"

namespace genrepro::sections {

namespace {

// Above this many framework runs each run's step table is folded (the summary table stays open):
// the repetition experiment alone has nine runs of 50 steps.
constexpr size_t kStageRunsShownOpen = 4;

bool uses_framework_chain(const RunRecord& r) { return r.params.sampling.framework != Framework::article; }

// "repetition_penalty 50,257 → top_k 50 → top_p 12" at one step.
std::string stage_chain_at(const StepRecord& s) {
  if (s.stages.empty()) return "(no stage: every control off)";
  std::vector<std::string> parts;
  for (const StageKept& k : s.stages) parts.push_back(k.stage + " " + format_count(k.kept));
  return join(parts, " → ");
}

std::string stage_median_kept(const RunRecord& r) {
  std::vector<int64_t> kept;
  for (const StepRecord& s : r.result.steps) kept.push_back(s.kept);
  if (kept.empty()) return "";
  std::sort(kept.begin(), kept.end());
  const size_t m = kept.size() / 2;
  if (kept.size() % 2) return format_count(kept[m]);
  return format_param((static_cast<double>(kept[m - 1]) + static_cast<double>(kept[m])) / 2.0);
}

// The run's settings: its values, the controls on, and (A/B) which evidence file it is from.
std::string stage_settings(const Inputs& in, const RunRecord& r) {
  std::string text = run_label(r, 0);
  if (in.documents.size() > 1) text += " [" + in.document(r).shown() + "]";
  return text;
}

ReportTable stage_summary_table(const Inputs& in, const Runs& runs) {
  ReportTable t;
  t.header = {"run", "framework", "settings", "stages at new token 1 (tokens kept after each)", "kept", "median kept", "steps"};
  t.numeric = {false, false, false, false, true, true, true};
  for (const RunRecord* r : runs) {
    const bool any = !r->result.steps.empty();
    t.rows.push_back({r->id, to_string(r->params.sampling.framework), stage_settings(in, *r),
                      any ? stage_chain_at(r->result.steps[0]) : "(no steps)", any ? format_count(r->result.steps[0].kept) : "",
                      stage_median_kept(*r), std::to_string(r->result.steps.size())});
  }
  return t;
}

// One row per step, one column per stage of the run's chain (every step lists the same stages:
// the reader checks it), then the final kept size.
ReportTable stage_step_table(const RunRecord& r) {
  ReportTable t;
  t.header = {"new token", "token"};
  t.numeric = {true, false};
  const std::vector<StageKept>& first = r.result.steps[0].stages;
  for (const StageKept& k : first) {
    t.header.push_back(k.stage);
    t.numeric.push_back(true);
  }
  t.header.push_back("kept");
  t.numeric.push_back(true);
  for (size_t s = 0; s < r.result.steps.size(); ++s) {
    const StepRecord& step = r.result.steps[s];
    std::vector<std::string> row = {std::to_string(s + 1), first_step_token(r, s)};
    for (size_t i = 0; i < first.size(); ++i)
      row.push_back(i < step.stages.size() && step.stages[i].stage == first[i].stage ? format_count(step.stages[i].kept) : "");
    row.push_back(format_count(step.kept));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

void add_stage_kept(const Inputs& in, Builder& b) {
  b.heading("Kept set per stage");
  const Runs runs = select(in.runs, uses_framework_chain);
  if (runs.empty()) {
    b.note("Not in this evidence: no run of framework hf or llama.cpp, so no step records its stages' kept sets.");
    return;
  }
  b.paragraph("Runs of the Hugging Face and llama.cpp chains record, at every step, how many tokens each stage left "
              "(tokens still drawable: score above −infinity), in the order the framework runs them; a stage whose "
              "value is off does not run. \"kept\" is the final distribution's size (Hugging Face's greedy: 1, the "
              "argmax). New token 1 is the first prediction, as in the nucleus table.");
  b.table(stage_summary_table(in, runs));
  const bool fold_each = runs.size() > kStageRunsShownOpen;
  for (const RunRecord* r : runs) {
    if (r->result.steps.empty() || r->result.steps[0].stages.empty()) continue;  // the summary says so
    const std::string title = std::string(to_string(r->params.sampling.framework)) + " " + stage_settings(in, *r) + " (run " + r->id +
                              "): kept per stage at each of " +
                              std::to_string(r->result.steps.size()) + (r->result.steps.size() == 1 ? " step" : " steps");
    const bool fold = fold_each || in.in_grid(*r);
    if (fold)
      b.fold_begin(title);
    else
      b.paragraph(title + ".");
    b.table(stage_step_table(*r));
    if (fold) b.fold_end();
  }
}

}  // namespace genrepro::sections
