// The first prediction at several temperatures, and the sampled runs (the article's "Temperature").
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

// Runs with the same prompt and temperature computed the same first logits; their recorded
// first-step probabilities may differ only by float32 noise from a different summation order
// (use_cache), about 1e-7 relative. Anything beyond 1e-6 is a different computation.
constexpr double kSameFirstStepTolerance = 1e-6;

// The first-prediction section's columns for one prompt: one run per temperature.
struct FirstPredictionColumns {
  std::string prompt;
  std::map<double, const RunRecord*> by_t;
};

// One column per temperature, per prompt (prompts in the order they first appear): a
// first-prediction-only run if there is one (that is what it is for), else the first run seen.
std::vector<FirstPredictionColumns> first_prediction_columns(const Runs& runs) {
  std::vector<FirstPredictionColumns> prompts;
  for (const RunRecord* r : runs) {
    if (!has_scaled_first_step(*r) || r->result.steps[0].top.empty()) continue;
    auto it = std::find_if(prompts.begin(), prompts.end(), [&](const auto& p) { return p.prompt == r->prompt; });
    if (it == prompts.end()) it = prompts.insert(prompts.end(), {r->prompt, {}});
    const auto [at, fresh] = it->by_t.emplace(r->params.sampling.temperature, r);
    if (!fresh && is_first_prediction_only(*r) && !is_first_prediction_only(*at->second)) at->second = r;
  }
  return prompts;
}

// Every other run at a column's prompt and temperature saw the same first logits, so its
// candidates must agree with the column's: one line per run that does not (its first bad rank).
std::vector<std::string> first_prediction_disagreements(const Runs& runs,
                                                        const std::vector<FirstPredictionColumns>& prompts) {
  std::vector<std::string> disagreements;
  for (const RunRecord* r : runs) {
    if (!has_scaled_first_step(*r)) continue;
    for (const auto& [prompt, by_t] : prompts) {
      const auto chosen = by_t.find(r->params.sampling.temperature);
      if (prompt != r->prompt || chosen == by_t.end() || chosen->second == r) continue;
      const auto& a = chosen->second->result.steps[0].top;
      const auto& c = r->result.steps[0].top;
      for (size_t i = 0; i < a.size() && i < c.size(); ++i) {
        if (a[i].id != c[i].id || std::fabs(a[i].prob_scaled - c[i].prob_scaled) > kSameFirstStepTolerance) {
          disagreements.push_back(chosen->second->id + " has " + quoted_token(a[i].text) + " " + format_prob(a[i].prob_scaled) +
                                  ", " + r->id + " has " + quoted_token(c[i].text) + " " + format_prob(c[i].prob_scaled) +
                                  " at rank " + std::to_string(i + 1));
          break;
        }
      }
    }
  }
  return disagreements;
}

// One prompt's table (rank, token, id, a probability column per temperature, the
// everything-else row) and the same numbers as a grouped bar chart.
struct FirstPredictionTable {
  size_t rows = 0;  // candidates every column lists
  ReportTable table;
  GroupedBarChartSpec chart;
  bool same_candidates = true;  // every column lists the first column's ids, rank for rank
};

FirstPredictionTable first_prediction_table(const FirstPredictionColumns& columns) {
  const auto& by_t = columns.by_t;
  const StepRecord& first = by_t.begin()->second->result.steps[0];
  FirstPredictionTable out;
  out.rows = first.top.size();
  for (const auto& [t, r] : by_t) out.rows = std::min(out.rows, r->result.steps[0].top.size());
  ReportTable& t = out.table;
  GroupedBarChartSpec& chart = out.chart;
  t.header = {"rank", "token", "id"};
  t.numeric = {true, false, true};
  chart.title = "First prediction: top " + std::to_string(out.rows) + " and everything else";
  chart.y_label = "probability";
  for (const auto& [temp, r] : by_t) {
    t.header.push_back("T = " + format_param(temp));
    t.numeric.push_back(true);
    chart.series.push_back("T = " + format_param(temp));
    chart.values.emplace_back();
  }
  for (size_t i = 0; i < out.rows; ++i) {
    std::vector<std::string> row = {std::to_string(i + 1), quoted_token(first.top[i].text), std::to_string(first.top[i].id)};
    size_t s = 0;
    for (const auto& [temp, r] : by_t) {
      const Candidate& c = r->result.steps[0].top[i];
      std::string cell = format_prob(c.prob_scaled);
      if (c.id != first.top[i].id) {
        out.same_candidates = false;
        cell += " (id " + std::to_string(c.id) + ")";
      }
      row.push_back(cell);
      chart.values[s++].push_back(c.prob_scaled);
    }
    t.rows.push_back(row);
    chart.groups.push_back(quoted_token(first.top[i].text));
  }
  std::vector<std::string> rest = {"", "everything else", ""};
  size_t s = 0;
  for (const auto& [temp, r] : by_t) {
    rest.push_back(format_prob(r->result.steps[0].rest_mass));
    chart.values[s++].push_back(r->result.steps[0].rest_mass);
  }
  t.rows.push_back(rest);
  chart.groups.push_back("everything else");
  return out;
}

void add_first_prediction_for_prompt(const FirstPredictionColumns& columns, Builder& b) {
  FirstPredictionTable made = first_prediction_table(columns);
  const std::string& prompt = columns.prompt;
  b.paragraph("The " + std::to_string(made.rows) + " most probable first tokens after " + quoted_token(prompt) +
              ", with probabilities over the whole vocabulary (softmax(logits / T), before any filter). "
              "The last row adds up everything else. Temperature rescales the distribution but does not reorder it.");
  b.table(std::move(made.table));
  if (!made.same_candidates) {
    b.note("The candidate lists differ between temperatures (cells marked with their id). Temperature alone never "
           "reorders logits, so these runs did not see the same first logits.");
  }
  std::vector<std::string> sources;
  for (const auto& [temp, r] : columns.by_t) sources.push_back(r->id);
  b.paragraph("From the first step of: " + join(sources, ", ") + ".");
  b.figure(b.figure_name("first-prediction"), "Top " + std::to_string(made.rows) + " first-token probabilities and everything else, at each temperature, after " + quoted_token(prompt) + ".",
           svg_grouped_bar_chart(made.chart));
}


}  // namespace

void add_first_prediction(const Inputs& in, Builder& b) {
  b.heading("First prediction at several temperatures");
  const std::vector<FirstPredictionColumns> prompts = first_prediction_columns(in.runs);
  if (prompts.empty()) {
    b.note("Not in this evidence: no sampled or first-prediction run with a temperature > 0 and a recorded first step, "
           "so the top-candidate table cannot be built.");
    return;
  }
  const std::vector<std::string> disagreements = first_prediction_disagreements(in.runs, prompts);
  for (const FirstPredictionColumns& columns : prompts) add_first_prediction_for_prompt(columns, b);
  for (const auto& d : disagreements) b.note("Runs with the same first prediction disagree: " + d + ".");
}

void add_temperature(const Inputs& in, Builder& b) {
  b.heading("Sampling at several temperatures");
  Runs unfiltered;
  for (const RunRecord* r : in.runs) {
    if (is_sampled(*r) && is_generating(*r) && !has_top_k(*r) && !has_top_p(*r)) unfiltered.push_back(r);
  }
  if (unfiltered.empty()) {
    b.note("Not in this evidence: no sampled run without top-k and top-p filters (max_new_tokens > 0).");
    return;
  }
  for (Runs group : group_by(unfiltered, kIgnoreTemperature)) {
    std::stable_sort(group.begin(), group.end(), [](const RunRecord* a, const RunRecord* c) {
      return a->params.sampling.temperature < c->params.sampling.temperature;
    });
    const RunRecord* greedy = nullptr;
    for (const RunRecord* r : in.runs) {
      if (is_greedy(*r) && is_generating(*r) && r->prompt == group[0]->prompt) {
        greedy = r;
        break;
      }
    }
    // One seed of a grid: its summaries are the view; the runs themselves are folded.
    const bool fold = in.all_in_grid(group);
    if (fold) b.fold_begin("Seed " + std::to_string(group[0]->params.sampling.seed) + " at each temperature, after " +
                           quoted_token(group[0]->prompt) + " (a grid's runs, summarized in Grid summaries)");
    b.paragraph("Sampling from softmax(logits / T) with seed " + std::to_string(group[0]->params.sampling.seed) +
                ", no filter, up to " + std::to_string(group[0]->params.max_new_tokens) + " new tokens, after " +
                quoted_token(group[0]->prompt) + ".");
    ReportTable t;
    t.header = {"T", "seed", "stop", "compared with greedy", "run"};
    t.numeric = {true, true, false, false, false};
    for (const RunRecord* r : group) {
      t.rows.push_back({format_param(r->params.sampling.temperature), std::to_string(r->params.sampling.seed), stop_text(*r),
                        greedy ? compare_outputs(*r, *greedy) : "no greedy run for this prompt", r->id});
    }
    b.table(std::move(t));
    for (const RunRecord* r : group) {
      b.paragraph("T = " + format_param(r->params.sampling.temperature) + ":");
      b.generated(r->text);
    }
    if (fold) b.fold_end();
  }
}

}  // namespace genrepro::sections
