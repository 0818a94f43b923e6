// What every report section shares (report_section_kit.hpp).
#include "report/report_section_kit.hpp"

#include <algorithm>
#include <cstdio>

#include "compare/compared_params.hpp"
#include "report/report_text.hpp"

namespace genrepro::sections {

namespace {

// A step chart with more runs than this becomes small multiples: panels of this many runs on a
// shared axis, so no line hides another and each colour means one run within its panel.
constexpr size_t kPanelSeries = 4;

// Every parameter that can change what a run produces, as one string (each value exactly, so
// two runs share a key only if they were asked for the same thing): the prompt and every
// compared parameter but the listing, the copy index and the texts' provenance, less what
// `ignore` leaves out.
std::string params_key(const RunRecord& r, unsigned ignore) {
  std::string key = "prompt=" + r.prompt;
  const OrderedJson all = compared_params(r.params);
  for (auto it = all.begin(); it != all.end(); ++it) {
    const std::string& k = it.key();
    if (k == "top_candidates" || k == "replica" || k == "control_texts") continue;
    if ((ignore & kIgnoreTemperature) && k == "temperature") continue;
    if ((ignore & kIgnoreSeed) && k == "seed") continue;
    if ((ignore & kIgnoreOrder) && k == "sampler_order") continue;
    if ((ignore & kIgnoreLength) && (k == "max_new_tokens" || k == "stop_at_eos")) continue;
    key += "\x1f" + k + "=" + it.value().dump();
  }
  return key;
}

}  // namespace

bool has_scaled_first_step(const RunRecord& r) {
  return (is_sampled(r) || is_first_prediction_only(r)) && r.params.sampling.temperature > 0 &&
         !r.result.steps.empty();
}

bool default_order(const RunRecord& r) { return r.params.sampling.sampler_order == SamplingParams{}.sampler_order; }

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string order_text(const RunRecord& r, const std::string& sep) {
  return join(stage_names(r.params.sampling.sampler_order), sep);
}

std::vector<Runs> group_by(const Runs& runs, unsigned ignore) {
  std::vector<Runs> groups;
  std::map<std::string, size_t> where;
  for (const RunRecord* r : runs) {
    const std::string key = params_key(*r, ignore);
    const auto it = where.find(key);
    if (it == where.end()) {
      where.emplace(key, groups.size());
      groups.push_back({r});
    } else {
      groups[it->second].push_back(r);
    }
  }
  return groups;
}

Runs select(const Runs& runs, bool (*pred)(const RunRecord&)) {
  Runs out;
  for (const RunRecord* r : runs) if (pred(*r)) out.push_back(r);
  return out;
}


std::string run_label(const RunRecord& r, unsigned omit) {
  std::vector<std::string> parts;
  for (const LabelPart& part : label_parts(r.params)) {
    if ((omit & kIgnoreTemperature) && part.key == "temperature") continue;
    if ((omit & kIgnoreSeed) && part.key == "seed") continue;
    if ((omit & kIgnoreOrder) && part.key == "sampler_order") continue;
    parts.push_back(part.text);
  }
  if (is_first_prediction_only(r)) parts.push_back("(first prediction only)");
  return join(parts, " ");
}

std::string stop_text(const RunRecord& r) {
  const std::string n = std::to_string(r.result.stop_step);
  switch (r.result.stop_reason) {
    case StopReason::eos: return "EOS at new token " + n;
    case StopReason::max_new_tokens: return "reached the limit (" + n + " new tokens)";
    case StopReason::context_full: return "context full after " + n + " new tokens";
  }
  return n;
}

std::string ordinal(int64_t n) {
  const int64_t last_two = n % 100;
  const int64_t last = n % 10;
  const char* suffix = (last_two >= 11 && last_two <= 13) ? "th" : last == 1 ? "st" : last == 2 ? "nd" : last == 3 ? "rd" : "th";
  return std::to_string(n) + suffix;
}

// "identical (50 tokens)" or "first differs at new token 3".
std::string compare_outputs(const RunRecord& a, const RunRecord& b) {
  const auto& x = a.result.output_ids;
  const auto& y = b.result.output_ids;
  const size_t common = std::min(x.size(), y.size());
  for (size_t i = 0; i < common; ++i) {
    if (x[i] != y[i]) return "first differs at new token " + std::to_string(i + 1);
  }
  if (x.size() == y.size()) return "identical (" + std::to_string(x.size()) + " tokens)";
  return "same first " + std::to_string(common) + " tokens, then one run stops";
}


std::string first_step_token(const RunRecord& r, size_t step) {
  if (step >= r.result.steps.size()) return "";
  const StepRecord& s = r.result.steps[step];
  return s.token_id ? quoted_token(s.token_text) : "(none picked)";
}

std::string or_not_recorded(const std::optional<std::string>& v) { return v ? *v : "not recorded"; }
std::string or_not_recorded(const std::string& v) { return v.empty() ? "not recorded" : v; }

void add_line_figures(Builder& b, const LineChartSpec& chart, const std::string& stem, const std::string& caption) {
  if (chart.series.size() <= kPanelSeries) {
    b.figure(b.figure_name(stem), caption, svg_line_chart(chart));
    return;
  }
  std::vector<double> all;
  for (const LineSeries& s : chart.series) all.insert(all.end(), s.y.begin(), s.y.end());
  const size_t panels = (chart.series.size() + kPanelSeries - 1) / kPanelSeries;
  for (size_t p = 0; p < panels; ++p) {
    LineChartSpec panel = chart;
    panel.series.assign(chart.series.begin() + static_cast<std::ptrdiff_t>(p * kPanelSeries),
                        chart.series.begin() + static_cast<std::ptrdiff_t>(std::min(chart.series.size(), (p + 1) * kPanelSeries)));
    panel.axis_values = all;
    panel.title = chart.title + " (panel " + std::to_string(p + 1) + " of " + std::to_string(panels) + ")";
    b.figure(b.figure_name(stem), caption + " Panel " + std::to_string(p + 1) + " of " + std::to_string(panels) +
                                      ", the same axis in every panel.", svg_line_chart(panel));
  }
}

}  // namespace genrepro::sections
