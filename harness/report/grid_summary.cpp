// Grid summaries (grid_summary.hpp): per-run figures, cells, the bootstrap, CSV and JSON.
#include "report/grid_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "compare/compared_params.hpp"
#include "params/param_table.hpp"
#include "report/report_section_kit.hpp"
#include "report/report_text.hpp"
#include "report/token_repeats.hpp"

namespace genrepro {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return kNaN;
  double sum = 0;
  for (double x : v) sum += x;  // in order: the independent check sums in the same order
  return sum / static_cast<double>(v.size());
}

// quantile_sorted(sorted v, 0.5) without sorting all of v (nth_element: linear time, which the
// bootstrap's 1,000 medians per step and cell need on large grids), with the same arithmetic, so
// the same double.
double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  const double h = static_cast<double>(v.size() - 1) * 0.5;
  const size_t lo = static_cast<size_t>(std::floor(h));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double at = v[lo];
  if (lo + 1 >= v.size()) return at;
  const double next = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo + 1), v.end());
  return at + (h - static_cast<double>(lo)) * (next - at);
}

// A figure's percentile interval from its resampled statistics (NaN statistics are resamples in
// which the figure was defined for no run: left out).
void set_interval(Estimate& e, std::vector<double> stats) {
  stats.erase(std::remove_if(stats.begin(), stats.end(), [](double x) { return std::isnan(x); }), stats.end());
  std::sort(stats.begin(), stats.end());
  e.lo = quantile_sorted(stats, kIntervalLow);
  e.hi = quantile_sorted(stats, kIntervalHigh);
}

// The value of figure f for run i of a cell, or NaN where it is not defined for that run.
double figure_value(const GridCell& c, size_t f, size_t i) {
  const RunFigures& r = c.per_run[i];
  const auto opt = [](const std::optional<double>& v) { return v ? *v : kNaN; };
  switch (f) {
    case 0: return r.eos ? 1.0 : 0.0;
    case 1: return static_cast<double>(r.new_tokens);
    case 2: return r.unique ? 1.0 : 0.0;
    case 3: return static_cast<double>(r.longest_repeat);
    case 4: return opt(r.repeated_ngram_rate);
    case 5: return opt(r.distinct_1);
    case 6: return opt(r.distinct_2);
    case 7: return opt(r.chosen_prob);
  }
  return kNaN;
}

// Figure 1 (the stop step) is a median; every other figure a mean over the runs that define it.
double statistic(size_t f, std::vector<double> values) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double x) { return std::isnan(x); }), values.end());
  if (values.empty()) return kNaN;
  return f == 1 ? median_of(std::move(values)) : mean_of(values);
}

void summarize_cell(GridCell& c, int resamples) {
  const size_t n = c.runs.size();
  std::map<std::vector<int64_t>, size_t> seen;
  for (const RunRecord* r : c.runs) ++seen[r->result.output_ids];
  c.distinct_continuations = seen.size();
  for (size_t i = 0; i < n; ++i) {
    c.per_run.push_back(run_figures(*c.runs[i]));
    c.per_run.back().unique = seen[c.runs[i]->result.output_ids] == 1;
  }
  for (size_t f = 0; f < kCellFigureCount; ++f) {
    std::vector<double> values;
    for (size_t i = 0; i < n; ++i) values.push_back(figure_value(c, f, i));
    Estimate& e = c.figures[f];
    e.n = static_cast<size_t>(std::count_if(values.begin(), values.end(), [](double x) { return !std::isnan(x); }));
    e.value = statistic(f, values);
  }
  std::vector<double> stops;
  size_t steps = 0;
  for (size_t i = 0; i < n; ++i) {
    stops.push_back(static_cast<double>(c.per_run[i].new_tokens));
    steps = std::max(steps, c.runs[i]->result.steps.size());
  }
  std::sort(stops.begin(), stops.end());
  c.stop_q1 = quantile_sorted(stops, 0.25);
  c.stop_q3 = quantile_sorted(stops, 0.75);
  c.stop_min = stops.empty() ? kNaN : stops.front();
  c.stop_max = stops.empty() ? kNaN : stops.back();
  const auto kept_values = [&](const std::vector<size_t>& which, size_t s) {
    std::vector<double> v;
    for (size_t i : which)
      if (s < c.runs[i]->result.steps.size()) v.push_back(static_cast<double>(c.runs[i]->result.steps[s].kept));
    return v;
  };
  std::vector<size_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = i;
  for (size_t s = 0; s < steps; ++s) {
    std::vector<double> v = kept_values(all, s);
    std::sort(v.begin(), v.end());
    KeptAtStep k;
    k.step = static_cast<int64_t>(s + 1);
    k.n = v.size();
    k.median = quantile_sorted(v, 0.5);
    k.q1 = quantile_sorted(v, 0.25);
    k.q3 = quantile_sorted(v, 0.75);
    c.kept.push_back(k);
  }

  // The bootstrap: `resamples` times, n runs drawn with replacement from the cell's n runs; every
  // figure is recomputed on the same draws (so figures of one resample belong together).
  SplitMix64 rng(c.stream_seed);
  std::vector<std::vector<double>> stats(kCellFigureCount);
  std::vector<std::vector<double>> kept_stats(steps);
  std::vector<size_t> drawn(n);
  for (int b = 0; b < resamples; ++b) {
    for (size_t k = 0; k < n; ++k) drawn[k] = static_cast<size_t>(rng.below(n));
    for (size_t f = 0; f < kCellFigureCount; ++f) {
      std::vector<double> values;
      for (size_t i : drawn) values.push_back(figure_value(c, f, i));
      stats[f].push_back(statistic(f, std::move(values)));
    }
    for (size_t s = 0; s < steps; ++s) kept_stats[s].push_back(median_of(kept_values(drawn, s)));
  }
  for (size_t f = 0; f < kCellFigureCount; ++f) set_interval(c.figures[f], stats[f]);
  for (size_t s = 0; s < steps; ++s) {
    Estimate e;
    set_interval(e, kept_stats[s]);
    c.kept[s].median_lo = e.lo;
    c.kept[s].median_hi = e.hi;
  }
}

// A cell's parameters as label parts, keyed by row: its framework (named even when it is the
// article's, so a grid across frameworks names each), what its label says of its sampling
// (params/param_table.hpp: label_parts, without the seed the cell pools), then the cap, the stop
// and the cache.
std::vector<LabelPart> parameter_parts(const RunRecord& r) {
  std::vector<LabelPart> parts = {{"framework", to_string(r.params.sampling.framework)}};
  for (LabelPart& part : label_parts(r.params))
    if (part.key != "framework" && part.key != "seed") parts.push_back(std::move(part));
  for (const char* key : {"max_new_tokens", "stop_at_eos", "use_cache"}) {
    const ParamRow& row = param(key);
    parts.push_back({key, std::string(row.label) + "=" + label_value(row, r.params)});
  }
  return parts;
}

// Each cell's label: the parts that differ between the grid's sampled cells ("llama.cpp T=0.7
// top_k=40 top_p=0.95 min_p=0.05"), so labels are short and never equal; a greedy cell says
// what run_label says; a grid of one sampled setting names it as the other sections do.
std::vector<std::string> cell_labels(const std::vector<sections::Runs>& groups) {
  std::vector<std::vector<LabelPart>> parts;
  for (const sections::Runs& g : groups) parts.push_back(parameter_parts(*g[0]));
  // A key varies when some sampled cell lacks it or shows it otherwise than another.
  const auto text_of = [](const std::vector<LabelPart>& p, const std::string& key) -> std::optional<std::string> {
    for (const LabelPart& part : p)
      if (part.key == key) return part.text;
    return std::nullopt;
  };
  std::vector<std::string> keys;  // every key of a sampled cell, in table order
  std::vector<size_t> sampled;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!sections::is_sampled(*groups[i][0])) continue;
    sampled.push_back(i);
    for (const LabelPart& part : parts[i])
      if (std::find(keys.begin(), keys.end(), part.key) == keys.end()) keys.push_back(part.key);
  }
  std::set<std::string> varies;
  for (const std::string& key : keys)
    for (size_t i : sampled)
      if (text_of(parts[i], key) != text_of(parts[sampled.front()], key)) varies.insert(key);
  std::vector<std::string> labels;
  for (size_t i = 0; i < groups.size(); ++i) {
    const RunRecord& r = *groups[i][0];
    if (!sections::is_sampled(r) || varies.empty()) {
      labels.push_back(sections::run_label(r, sections::kIgnoreSeed));
      continue;
    }
    std::vector<std::string> shown;
    for (const LabelPart& part : parts[i])
      if (varies.count(part.key)) shown.push_back(part.text);
    labels.push_back(sections::join(shown, " "));
  }
  return labels;
}

GridSummary summarize_experiment(const std::string& experiment, const std::string& document, const std::vector<const RunRecord*>& runs,
                                 uint64_t bootstrap_seed) {
  GridSummary g;
  g.experiment = experiment;
  g.document = document;
  g.bootstrap_seed = bootstrap_seed;
  sections::Runs generating;
  for (const RunRecord* r : runs) {
    if (sections::is_generating(*r)) generating.push_back(r);
    else ++g.first_prediction_only;
  }
  g.runs = generating.size();
  SplitMix64 seeds(bootstrap_seed);
  const std::vector<sections::Runs> groups = sections::group_by(generating, sections::kIgnoreSeed);
  const std::vector<std::string> labels = cell_labels(groups);
  for (size_t i = 0; i < groups.size(); ++i) {
    const sections::Runs& group = groups[i];
    GridCell c;
    c.index = g.cells.size();
    c.prompt = group[0]->prompt;
    c.parameters = labels[i];
    c.runs = group;
    c.stream_seed = seeds.next();
    summarize_cell(c, g.resamples);
    g.cells.push_back(std::move(c));
  }
  return g;
}

std::string number_text(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line + "\r\n";
}

OrderedJson number_json(double v) { return std::isfinite(v) ? OrderedJson(v) : OrderedJson(nullptr); }

}  // namespace

double quantile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return kNaN;
  const double h = static_cast<double>(sorted.size() - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[lo + 1] - sorted[lo]);
}

size_t longest_repeat_length(const std::vector<int64_t>& ids) { return longest_repeat(ids).length; }

RunFigures run_figures(const RunRecord& r) {
  RunFigures f;
  const std::vector<int64_t>& ids = r.result.output_ids;
  f.eos = r.result.stop_reason == StopReason::eos;
  f.new_tokens = r.result.stop_step;
  f.longest_repeat = longest_repeat_length(ids);
  if (ids.size() >= kRepeatedNgram) {
    std::set<std::vector<int64_t>> earlier;
    size_t repeated = 0;
    const size_t grams = ids.size() - kRepeatedNgram + 1;
    for (size_t i = 0; i < grams; ++i) {
      std::vector<int64_t> gram(ids.begin() + static_cast<std::ptrdiff_t>(i), ids.begin() + static_cast<std::ptrdiff_t>(i + kRepeatedNgram));
      repeated += !earlier.insert(std::move(gram)).second;
    }
    f.repeated_ngram_rate = static_cast<double>(repeated) / static_cast<double>(grams);
  }
  if (!ids.empty()) f.distinct_1 = static_cast<double>(std::set<int64_t>(ids.begin(), ids.end()).size()) / static_cast<double>(ids.size());
  if (ids.size() >= 2) {
    std::set<std::pair<int64_t, int64_t>> bigrams;
    for (size_t i = 0; i + 1 < ids.size(); ++i) bigrams.emplace(ids[i], ids[i + 1]);
    f.distinct_2 = static_cast<double>(bigrams.size()) / static_cast<double>(ids.size() - 1);
  }
  double sum = 0;
  size_t picked = 0;
  for (const StepRecord& s : r.result.steps) {
    if (!s.token_id) continue;
    sum += s.prob_t1;
    ++picked;
  }
  // A NaN or infinite probability in the evidence leaves the figure undefined for this run, so
  // its n counts only the runs its mean rests on.
  if (picked && std::isfinite(sum)) f.chosen_prob = sum / static_cast<double>(picked);
  return f;
}

std::vector<GridSummary> summarize_grids(const std::vector<ReportDocument>& documents, uint64_t bootstrap_seed) {
  std::map<std::string, size_t> files_of_id;
  for (const ReportDocument& d : documents) {
    std::set<std::string> ids;
    for (const RunRecord& r : d.evidence.runs) ids.insert(r.id);
    for (const std::string& id : ids) ++files_of_id[id];
  }
  const bool side_by_side = std::any_of(files_of_id.begin(), files_of_id.end(), [](const auto& kv) { return kv.second > 1; });
  // (document or pooled, experiment) in the order they first appear.
  std::vector<std::pair<std::pair<size_t, std::string>, std::vector<const RunRecord*>>> experiments;
  for (size_t d = 0; d < documents.size(); ++d) {
    for (const RunRecord& r : documents[d].evidence.runs) {
      const std::pair<size_t, std::string> key{side_by_side ? d : 0, r.experiment};
      auto it = std::find_if(experiments.begin(), experiments.end(), [&](const auto& e) { return e.first == key; });
      if (it == experiments.end()) it = experiments.insert(experiments.end(), {key, {}});
      it->second.push_back(&r);
    }
  }
  std::vector<GridSummary> grids;
  for (const auto& [key, runs] : experiments) {
    GridSummary g = summarize_experiment(key.second, side_by_side ? documents[key.first].shown() : "", runs, bootstrap_seed);
    if (std::any_of(g.cells.begin(), g.cells.end(), [](const GridCell& c) { return c.runs.size() >= kMinGridSeeds; }))
      grids.push_back(std::move(g));
  }
  return grids;
}

OrderedJson grid_summaries_json(const std::vector<GridSummary>& grids) {
  OrderedJson out = OrderedJson::array();
  for (size_t gi = 0; gi < grids.size(); ++gi) {
    const GridSummary& g = grids[gi];
    OrderedJson grid = {{"grid", gi}, {"experiment", g.experiment}, {"document", g.document}, {"runs", g.runs},
                        {"first_prediction_only", g.first_prediction_only},
                        {"bootstrap", {{"rng", "splitmix64"}, {"seed", g.bootstrap_seed}, {"resamples", g.resamples},
                                       {"interval", {kIntervalLow, kIntervalHigh}}, {"method", "percentile"}}},
                        {"cells", OrderedJson::array()}};
    for (const GridCell& c : g.cells) {
      const RunRecord& r = *c.runs[0];
      OrderedJson seeds = OrderedJson::array();
      for (const RunRecord* run : c.runs) seeds.push_back(run->params.sampling.seed);
      OrderedJson figures = OrderedJson::object();
      for (size_t f = 0; f < kCellFigureCount; ++f) {
        const Estimate& e = c.figures[f];
        figures[kCellFigures[f]] = {{"value", number_json(e.value)}, {"lo", number_json(e.lo)}, {"hi", number_json(e.hi)}, {"n", e.n}};
      }
      OrderedJson kept = OrderedJson::array();
      for (const KeptAtStep& k : c.kept)
        kept.push_back({{"step", k.step}, {"n", k.n}, {"median", number_json(k.median)}, {"q1", number_json(k.q1)},
                        {"q3", number_json(k.q3)}, {"median_lo", number_json(k.median_lo)}, {"median_hi", number_json(k.median_hi)}});
      grid["cells"].push_back({{"cell", c.index},
                               {"prompt", c.prompt},
                               {"parameters", c.parameters},
                               {"mode", to_string(r.params.sampling.mode)},
                               {"temperature", r.params.sampling.temperature},
                               {"top_k", r.params.sampling.top_k},
                               {"top_p", r.params.sampling.top_p},
                               {"max_new_tokens", r.params.max_new_tokens},
                               {"sampler_order", stage_names(r.params.sampling.sampler_order)},
                               {"top_p_rule", to_string(r.params.sampling.top_p_rule)},
                               {"rng", to_string(r.params.sampling.rng)},
                               {"runs", c.runs.size()},
                               {"seeds", seeds},
                               {"stream_seed", c.stream_seed},
                               {"figures", figures},
                               {"stop_step", {{"min", number_json(c.stop_min)}, {"q1", number_json(c.stop_q1)},
                                              {"q3", number_json(c.stop_q3)}, {"max", number_json(c.stop_max)}}},
                               {"distinct_continuations", c.distinct_continuations},
                               {"kept_per_step", kept}});
    }
    out.push_back(std::move(grid));
  }
  return out;
}

// The parameters a cell's CSV row lists: every compared parameter (compare/compared_params.hpp:
// the framework, the article's keys, every control) but the seed and copy index the cell pools
// and the texts' provenance.
std::vector<std::string> csv_param_keys() {
  std::vector<std::string> keys;
  for (const std::string& k : compared_param_keys())
    if (k != "seed" && k != "replica" && k != "control_texts") keys.push_back(k);
  return keys;
}

std::string grid_cells_csv(const std::vector<GridSummary>& grids) {
  const std::vector<std::string> param_keys = csv_param_keys();
  std::vector<std::string> header = {"grid", "experiment", "document", "cell", "prompt", "parameters"};
  header.insert(header.end(), param_keys.begin(), param_keys.end());
  header.insert(header.end(), {"runs", "bootstrap_seed", "resamples", "stream_seed"});
  for (const char* f : kCellFigures)
    for (const char* part : {"", "_lo", "_hi", "_n"}) header.push_back(std::string(f) + part);
  header.insert(header.end(), {"stop_step_min", "stop_step_q1", "stop_step_q3", "stop_step_max", "distinct_continuations"});
  std::string out = csv_row(header);
  for (size_t gi = 0; gi < grids.size(); ++gi) {
    const GridSummary& g = grids[gi];
    for (const GridCell& c : g.cells) {
      std::vector<std::string> row = {std::to_string(gi), g.experiment, g.document, std::to_string(c.index), c.prompt, c.parameters};
      for (const std::string& key : param_keys) row.push_back(csv_value(param(key), c.runs[0]->params));
      row.insert(row.end(), {std::to_string(c.runs.size()), std::to_string(g.bootstrap_seed), std::to_string(g.resamples),
                             std::to_string(c.stream_seed)});
      for (const Estimate& e : c.figures)
        row.insert(row.end(), {number_text(e.value), number_text(e.lo), number_text(e.hi), std::to_string(e.n)});
      row.insert(row.end(), {number_text(c.stop_min), number_text(c.stop_q1), number_text(c.stop_q3), number_text(c.stop_max),
                             std::to_string(c.distinct_continuations)});
      out += csv_row(row);
    }
  }
  return out;
}

std::string grid_kept_csv(const std::vector<GridSummary>& grids) {
  std::string out = csv_row({"grid", "cell", "step", "n", "median", "q1", "q3", "median_lo", "median_hi"});
  for (size_t gi = 0; gi < grids.size(); ++gi)
    for (const GridCell& c : grids[gi].cells)
      for (const KeptAtStep& k : c.kept)
        out += csv_row({std::to_string(gi), std::to_string(c.index), std::to_string(k.step), std::to_string(k.n), number_text(k.median),
                        number_text(k.q1), number_text(k.q3), number_text(k.median_lo), number_text(k.median_hi)});
  return out;
}

}  // namespace genrepro
