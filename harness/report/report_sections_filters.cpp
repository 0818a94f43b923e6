// Top-k and top-p: nucleus sizes, and what the sampler order changes (the article's "Top-p" and
// "Sampler order").
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

void add_nucleus(const Inputs& in, Builder& b) {
  b.heading("Nucleus sizes");
  Runs filtered;
  for (const RunRecord* r : in.runs) if (has_top_p(*r) && has_scaled_first_step(*r)) filtered.push_back(r);
  if (filtered.empty()) {
    b.note("Not in this evidence: no run with top-p < 1 and a recorded first step, so there are no nucleus sizes.");
    return;
  }
  b.paragraph("How many tokens the sampler chain keeps for the first prediction (tokens with non-zero probability "
              "after every stage). The temperature changes how many tokens it takes to reach p.");
  ReportTable t;
  t.header = {"prompt", "top-p", "top-k", "sampler order", "T", "tokens kept", "run"};
  t.numeric = {false, true, true, false, true, true, false};
  const OrderedJson* facts = in.options.article_facts ? &*in.options.article_facts : nullptr;
  if (facts) {  // the article's number beside the evidence's (--article)
    t.header.insert(t.header.begin() + 6, {"article", "same as the article"});
    t.numeric.insert(t.numeric.begin() + 6, {true, false});
  }
  std::vector<std::string> disagreements;
  std::vector<std::pair<BarChartSpec, std::string>> charts;
  for (const Runs& group : group_by(filtered, kIgnoreTemperature | kIgnoreSeed | kIgnoreLength)) {
    std::map<double, const RunRecord*> by_t;
    for (const RunRecord* r : group) {
      const auto [it, fresh] = by_t.emplace(r->params.sampling.temperature, r);
      if (!fresh && it->second->result.steps[0].kept != r->result.steps[0].kept) {
        disagreements.push_back(it->second->id + " keeps " + format_count(it->second->result.steps[0].kept) + ", " + r->id +
                                " keeps " + format_count(r->result.steps[0].kept));
      }
    }
    const RunRecord& any = *group[0];
    BarChartSpec chart;
    chart.title = "Nucleus size at p = " + format_param(any.params.sampling.top_p) + " (first prediction)" +
                  (default_order(any) ? "" : ", order " + order_text(any, "→"));
    chart.y_label = "tokens kept (log scale)";
    chart.log_y = true;
    for (const auto& [temp, r] : by_t) {
      const int64_t kept = r->result.steps[0].kept;
      std::vector<std::string> row = {quoted_token(r->prompt), format_param(r->params.sampling.top_p),
                                      has_top_k(*r) ? std::to_string(r->params.sampling.top_k) : "off", order_text(*r),
                                      format_param(temp), format_count(kept), r->id};
      if (facts) {
        const std::optional<int64_t> article = article_nucleus(*facts, *r);
        row.insert(row.begin() + 6, {article ? format_count(*article) : "", article ? (*article == kept ? "yes" : "no") : "not given"});
        t.marked.resize(t.rows.size() + 1);
        t.marked.back().assign(row.size(), false);
        t.marked.back()[7] = article && *article != kept;
      }
      t.rows.push_back(std::move(row));
      chart.categories.push_back("T = " + format_param(temp));
      chart.values.push_back(static_cast<double>(kept));
      chart.value_labels.push_back(format_count(kept));
    }
    if (by_t.size() > 1) charts.emplace_back(std::move(chart), any.prompt);
  }
  b.table(std::move(t));
  for (const auto& d : disagreements) b.note("Runs with the same first-step parameters disagree: " + d + ".");
  for (const auto& [chart, prompt] : charts) {
    b.figure(b.figure_name("nucleus-sizes"), chart.title + ", after " + quoted_token(prompt) + ". Log scale.", svg_bar_chart(chart));
  }
}

void add_sampler_order(const Inputs& in, Builder& b) {
  b.heading("Sampler order");
  std::vector<Runs> comparisons;
  for (const Runs& group : group_by(in.runs, kIgnoreOrder)) {
    std::set<std::vector<SamplerStage>> orders;
    for (const RunRecord* r : group) orders.insert(r->params.sampling.sampler_order);
    if (orders.size() > 1 && is_sampled(*group[0])) comparisons.push_back(group);
  }
  if (comparisons.empty()) {
    b.note("Not in this evidence: no runs that differ only in their sampler order.");
    return;
  }
  for (const Runs& group : comparisons) {
    const bool fold = in.all_in_grid(group);  // a grid's runs: summarized in Grid summaries
    if (fold) b.fold_begin(quoted_token(group[0]->prompt) + " " + run_label(*group[0], kIgnoreOrder) + ": each sampler order, step by step");
    b.paragraph("Same parameters (" + run_label(*group[0], kIgnoreOrder) + ", up to " +
                std::to_string(group[0]->params.max_new_tokens) + " new tokens), different order of the sampler "
                "stages. Side by side: the token picked at each step and how many tokens the chain kept.");
    ReportTable t;
    t.header = {"step"};
    t.numeric = {true};
    size_t steps = 0;
    for (const RunRecord* r : group) {
      t.header.push_back(order_text(*r) + ": token");
      t.header.push_back("kept");
      t.numeric.push_back(false);
      t.numeric.push_back(true);
      steps = std::max(steps, r->result.steps.size());
    }
    t.header.push_back("same token");
    t.numeric.push_back(false);
    for (size_t s = 0; s < steps; ++s) {
      std::vector<std::string> row = {std::to_string(s + 1)};
      std::set<std::optional<int64_t>> picked;
      for (const RunRecord* r : group) {
        const bool has = s < r->result.steps.size();
        row.push_back(has ? first_step_token(*r, s) : "");
        row.push_back(has ? format_count(r->result.steps[s].kept) : "");
        picked.insert(has ? r->result.steps[s].token_id : std::nullopt);
      }
      row.push_back(picked.size() == 1 ? "yes" : "no");
      t.rows.push_back(row);
    }
    b.table(std::move(t));
    for (const RunRecord* r : group) {
      if (!is_generating(*r)) continue;
      b.paragraph(order_text(*r) + " (" + r->id + "): " + stop_text(*r) + ".");
      b.generated(r->text);
    }
    if (fold) b.fold_end();
  }
}

}  // namespace genrepro::sections
