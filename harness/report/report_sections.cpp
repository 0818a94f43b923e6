// The report's sections, in the article's order. Each section picks its runs by their
// parameters, builds its tables and charts, and adds a note instead when the evidence holds no
// run it could use.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "report/report.hpp"
#include "report/report_compare.hpp"
#include "report/report_svg.hpp"
#include "report/report_text.hpp"

namespace genrepro {

namespace {

// Shortest token span the greedy section calls a repetition: shorter spans (", the") repeat in
// any text.
constexpr size_t kMinRepeatTokens = 4;
// Runs with the same prompt and temperature computed the same first logits; their recorded
// first-step probabilities may differ only by float32 noise from a different summation order
// (use_cache), about 1e-7 relative. Anything beyond 1e-6 is a different computation.
constexpr double kSameFirstStepTolerance = 1e-6;
// The repeated passage is searched byte by byte (quadratic time); longer continuations skip it.
constexpr size_t kMaxPassageSearchBytes = 8192;
// More lines than this make a step chart unreadable; the rest are listed in a note.
constexpr size_t kMaxChartSeries = 16;
// A step chart with more runs than this becomes small multiples: panels of this many runs on a
// shared axis, so no line hides another and each colour means one run within its panel.
constexpr size_t kPanelSeries = 4;

using Runs = std::vector<const RunRecord*>;

// ---- what a run is ----

bool is_first_prediction_only(const RunRecord& r) { return r.params.max_new_tokens == 0; }
bool is_generating(const RunRecord& r) { return r.params.max_new_tokens > 0; }
bool is_greedy(const RunRecord& r) { return r.params.sampling.mode == DecodeMode::greedy; }
bool is_sampled(const RunRecord& r) { return r.params.sampling.mode == DecodeMode::sample; }
bool has_top_k(const RunRecord& r) { return r.params.sampling.top_k > 0; }
bool has_top_p(const RunRecord& r) { return r.params.sampling.top_p < 1; }
// A run whose first step shows softmax(logits / T) at a meaningful temperature.
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

// The run's sampler order as its stage names joined by `sep`: "top_k → top_p → temperature".
std::string order_text(const RunRecord& r, const std::string& sep = " → ") {
  return join(stage_names(r.params.sampling.sampler_order), sep);
}

// Which parameters a grouping key leaves out.
enum KeyIgnore : unsigned {
  kKeepAll = 0,
  kIgnoreTemperature = 1u << 0,
  kIgnoreSeed = 1u << 1,
  kIgnoreOrder = 1u << 2,
  kIgnoreLength = 1u << 3,  // max_new_tokens and stop_at_eos: they do not change the first step
};

// Every parameter that can change what a run produces, as one string (doubles exactly, so two
// runs share a key only if they were asked for the same thing).
std::string params_key(const RunRecord& r, unsigned ignore) {
  const auto& s = r.params.sampling;
  char buf[64];
  std::string key = "prompt=" + r.prompt + "\x1f" + "mode=" + to_string(s.mode);
  if (!(ignore & kIgnoreTemperature)) std::snprintf(buf, sizeof buf, "\x1fT=%.17g", s.temperature), key += buf;
  if (!(ignore & kIgnoreSeed)) key += "\x1fseed=" + std::to_string(s.seed);
  if (!(ignore & kIgnoreOrder)) key += "\x1forder=" + order_text(r, ",");
  if (!(ignore & kIgnoreLength)) key += "\x1fmax=" + std::to_string(r.params.max_new_tokens) + (r.params.stop_at_eos ? "+eos" : "");
  std::snprintf(buf, sizeof buf, "\x1fk=%lld\x1fp=%.17g", static_cast<long long>(s.top_k), s.top_p);
  return key + buf + "\x1frule=" + to_string(s.top_p_rule) + "\x1frng=" + to_string(s.rng) +
         (r.params.use_cache ? "\x1f" "cache" : "");
}

// Runs grouped by key, groups and their runs in evidence order.
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

// "T=1 p=0.9 seed=43" (only what is set), for legends, labels and table rows.
std::string run_label(const RunRecord& r, unsigned omit = kKeepAll) {
  const auto& s = r.params.sampling;
  std::vector<std::string> parts;
  if (is_greedy(r)) {
    parts.push_back("greedy");
  } else {
    if (!(omit & kIgnoreTemperature)) parts.push_back("T=" + format_param(s.temperature));
    if (has_top_k(r)) parts.push_back("k=" + std::to_string(s.top_k));
    if (has_top_p(r)) parts.push_back("p=" + format_param(s.top_p));
    if (!(omit & kIgnoreSeed)) parts.push_back("seed=" + std::to_string(s.seed));
    if (!(omit & kIgnoreOrder) && !default_order(r)) parts.push_back("order=" + order_text(r, "→"));
    if (s.top_p_rule != SamplingParams{}.top_p_rule && has_top_p(r))
      parts.push_back(std::string("rule=") + to_string(s.top_p_rule));
    if (s.rng != SamplingParams{}.rng) parts.push_back(std::string("rng=") + to_string(s.rng));
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
  void figure(const std::string& file, const std::string& caption, std::string svg) {
    add(ReportBlock::Kind::figure, "").figure = ReportFigure{file, caption, std::move(svg)};
  }
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
  Runs runs;  // every run of every document, in order
  std::map<const RunRecord*, size_t> document_of;

  const ReportDocument& document(const RunRecord& r) const { return documents[document_of.at(&r)]; }
  std::string legend(const RunRecord& r) const {
    return documents.size() > 1 ? run_label(r) + " [" + document(r).shown() + "]" : run_label(r);
  }
};

// ---- sections ----

// The longest token span that occurs twice without overlapping (dynamic programming over pairs
// of end positions, one row at a time), and how often it occurs.
struct Repeat {
  size_t length = 0;
  size_t first = 0;
  size_t second = 0;
  size_t count = 0;
};

Repeat longest_repeat(const std::vector<int64_t>& ids) {
  Repeat best;
  const size_t n = ids.size();
  std::vector<size_t> prev(n + 1, 0), cur(n + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    std::fill(cur.begin(), cur.end(), 0);
    for (size_t j = i + 1; j <= n; ++j) {
      if (ids[i - 1] != ids[j - 1]) continue;
      cur[j] = std::min(prev[j - 1] + 1, j - i);  // spans ending at i and j must not overlap
      if (cur[j] > best.length) best = Repeat{cur[j], i - cur[j], j - cur[j], 0};
    }
    std::swap(prev, cur);
  }
  if (best.length == 0) return best;
  for (size_t at = 0; at + best.length <= n;) {
    if (std::equal(ids.begin() + at, ids.begin() + at + best.length, ids.begin() + best.first)) {
      ++best.count;
      at += best.length;
    } else {
      ++at;
    }
  }
  return best;
}

// The longest passage of `text` that occurs twice without overlapping, cut to whole UTF-8
// characters. Token texts cannot give it: a character split over two tokens (’ in GPT-2) shows
// as two U+FFFD pieces in the step records, but whole in the decoded text.
std::string longest_repeated_passage(const std::string& text) {
  const size_t n = text.size();
  if (n > kMaxPassageSearchBytes) return "";
  size_t best_len = 0;
  size_t best_start = 0;
  std::vector<size_t> prev(n + 1, 0), cur(n + 1, 0);
  for (size_t i = 1; i <= n; ++i) {
    std::fill(cur.begin(), cur.end(), 0);
    for (size_t j = i + 1; j <= n; ++j) {
      if (text[i - 1] != text[j - 1]) continue;
      cur[j] = std::min(prev[j - 1] + 1, j - i);
      if (cur[j] > best_len) best_len = cur[j], best_start = i - cur[j];
    }
    std::swap(prev, cur);
  }
  const auto continuation_byte = [&](size_t k) { return k < n && (static_cast<unsigned char>(text[k]) & 0xC0) == 0x80; };
  size_t begin = best_start;
  size_t end = best_start + best_len;
  while (begin < end && continuation_byte(begin)) ++begin;
  while (end > begin && continuation_byte(end)) --end;
  return text.substr(begin, end - begin);
}

// Evidence made on the random-weight fixture says so before anything else: its texts and
// probabilities are noise by design, and a reader must not take them for GPT-2's.
void add_fixture_banner(const Inputs& in, Builder& b) {
  std::vector<std::string> on_fixture;
  for (const auto& d : in.documents)
    if (d.evidence.model.source == "fixture") on_fixture.push_back(d.name);
  if (on_fixture.empty()) return;
  b.banner("Random-weight fixture: " + join(on_fixture, ", ") +
           " ran on genrepro's tiny fixture model, whose weights are deterministic noise. Its texts and "
           "probabilities are noise by design: this report checks the pipeline, not GPT-2 (run with --model "
           "for real weights).");
}

void add_intro(const Inputs& in, Builder& b) {
  std::vector<std::string> names;
  for (const auto& d : in.documents) {
    names.push_back(d.name + " (created " + or_not_recorded(d.evidence.created_utc) + ", model source " +
                    or_not_recorded(d.evidence.model.source) + ", " + std::to_string(d.evidence.runs.size()) + " runs)");
  }
  b.paragraph("Regenerated from the evidence in " + join(names, "; ") +
              ". Runs are recognized by their parameters (mode, temperature, top-p, seed, max_new_tokens, sampler order), "
              "so any experiment with such runs fills these sections. Generated text is model output, shown as "
              "written: control characters appear as visible symbols and invalid bytes as U+FFFD.");
}

void add_greedy(const Inputs& in, Builder& b) {
  b.heading("Greedy decoding and its repetition");
  Runs greedy;
  for (const RunRecord* r : in.runs) if (is_greedy(*r) && is_generating(*r)) greedy.push_back(r);
  if (greedy.empty()) {
    b.note("Not in this evidence: no greedy run with max_new_tokens > 0, so there is no greedy output to show.");
    return;
  }
  b.paragraph("Every step takes the most probable token (argmax).");
  for (const RunRecord* r : greedy) {
    b.paragraph(in.legend(*r) + " (run " + r->id + "): " + stop_text(*r) + ".");
    b.generated(r->text);
    const Repeat rep = longest_repeat(r->result.output_ids);
    if (rep.length >= kMinRepeatTokens) {
      const std::string passage = longest_repeated_passage(r->continuation);
      b.paragraph("Repetition: a span of " + std::to_string(rep.length) + " tokens occurs " + std::to_string(rep.count) +
                  " times (from new token " + std::to_string(rep.first + 1) + " and again from new token " +
                  std::to_string(rep.second + 1) + ")" +
                  (passage.empty() ? std::string(".") : ". The longest passage the text repeats: " + quoted_token(passage)));
    } else {
      b.paragraph("Repetition: no span of " + std::to_string(kMinRepeatTokens) + " or more tokens occurs twice.");
    }
  }
}

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
  }
}

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
  }
}

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
  }
}

void add_stopping(const Inputs& in, Builder& b) {
  b.heading("How the runs stopped");
  const Runs generating = select(in.runs, is_generating);
  if (generating.empty()) {
    b.note("Not in this evidence: no run with max_new_tokens > 0.");
    return;
  }
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

// One chart, or small multiples when there are more series than a panel holds: panels share
// their y axis and are numbered in the title ("(panel 2 of 3)"). `stem` names the SVG files.
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

void add_step_charts(const Inputs& in, Builder& b) {
  b.heading("Step by step");
  Runs stepped;
  for (const RunRecord* r : in.runs) if (is_generating(*r) && r->result.steps.size() > 1) stepped.push_back(r);
  const Runs sampled = select(stepped, is_sampled);
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
      LineSeries s;
      s.label = in.legend(*r);
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
    LineSeries s;
    s.label = in.legend(*r);
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
    ReportTable t;
    t.header = {"#", "run", "mode", "T", "top-k", "top-p", "seed", "sampler order", "limit", "stop", "new tokens"};
    t.numeric = {true, false, false, true, true, true, true, false, true, false, true};
    Runs runs;
    for (const RunRecord* r : in.runs) if (r->experiment == name) runs.push_back(r);
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
  }
}

void add_sources(const Inputs& in, Builder& b) {
  b.heading("Where this came from");
  for (const ReportDocument& d : in.documents) {
    const Evidence& e = d.evidence;
    const Environment& env = e.environment;
    b.heading("Evidence " + quoted_token(d.name), 3);
    ReportTable t;
    t.header = {"field", "value"};
    t.numeric = {false, false};
    const auto row = [&](const std::string& name, const std::string& value) { t.rows.push_back({name, value}); };
    row("schema", e.schema);
    row("genrepro", or_not_recorded(e.genrepro.version) + " (commit " + or_not_recorded(e.genrepro.git_commit) + ")");
    row("created (UTC)", or_not_recorded(e.created_utc));
    row("libtorch", or_not_recorded(env.libtorch_version));
    row("ATen CPU capability", or_not_recorded(env.cpu_capability));
    row("BLAS", env.blas.vendor + ", " + or_not_recorded(env.blas.resolved ? env.blas.resolved : env.blas.library) +
                    (env.blas.core ? ", core " + *env.blas.core : "") +
                    (env.blas.threads ? ", " + std::to_string(*env.blas.threads) + " threads" : ""));
    row("threads (intra-op / inter-op)", std::to_string(env.threads.intra_op) + " / " + std::to_string(env.threads.inter_op));
    row("CPU", or_not_recorded(env.cpu.model) + " (" + std::to_string(env.cpu.logical_cores) + " logical cores, " +
                   std::to_string(env.cpu.usable_cores) + " usable)");
    row("float control", env.float_control ? std::string("flush-to-zero ") + (env.float_control->flush_to_zero ? "on" : "off") +
                                                 ", denormals-are-zero " + (env.float_control->denormals_are_zero ? "on" : "off") +
                                                 ", rounding " + env.float_control->rounding
                                           : "not recorded");
    std::vector<std::string> vars;
    for (const auto& [name, value] : env.numerics_env) {
      if (value) vars.push_back(name + "=" + *value);
    }
    row("numerics variables set", vars.empty() ? "none" : join(vars, " "));
    row("compiler", or_not_recorded(env.compiler));
    row("OS / kernel", or_not_recorded(env.os) + " / " + or_not_recorded(env.kernel));
    row("dtype / device", env.dtype + " / " + env.device);
    row("model", or_not_recorded(e.model.source) + ": " + or_not_recorded(e.model.path));
    row("EOS token id / context length", std::to_string(e.model.eos_token_id) + " / " + std::to_string(e.model.n_positions));
    b.table(std::move(t));
    if (e.model.files.empty()) {
      b.note("The evidence records no model file checksums.");
    } else {
      ReportTable f;
      f.header = {"model file", "bytes", "sha256"};
      f.numeric = {false, true, false};
      for (const auto& [name, info] : e.model.files) {  // a std::map: a fixed, sorted order
        f.rows.push_back({name, format_count(static_cast<int64_t>(info.bytes)), info.sha256});
      }
      b.table(std::move(f));
    }
    if (!e.experiments.empty()) {
      ReportTable x;
      x.header = {"experiment", "file", "sha256"};
      x.numeric = {false, false, false};
      for (const auto& ex : e.experiments) x.rows.push_back({ex.name, ex.path, ex.sha256});
      b.table(std::move(x));
    }
  }
}

}  // namespace

ReportContent build_report_content(const std::vector<ReportDocument>& documents, const ReportOptions& options) {
  ReportContent report;
  report.title = "genrepro report: the loop, sampling, and stopping";
  Inputs in{documents, options, {}, {}};
  for (size_t d = 0; d < documents.size(); ++d) {
    for (const auto& r : documents[d].evidence.runs) {
      in.runs.push_back(&r);
      in.document_of.emplace(&r, d);
    }
  }
  Builder b(report);
  // The reviewer's question first: is it noise (the fixture), and did it reproduce (the verdict)?
  add_fixture_banner(in, b);
  add_verdict_section(documents, options, report.blocks);
  add_intro(in, b);
  b.contents();
  add_ab_section(documents, report.blocks);
  add_article_section(documents, options, report.blocks);
  add_greedy(in, b);
  add_first_prediction(in, b);
  add_temperature(in, b);
  add_nucleus(in, b);
  add_sampler_order(in, b);
  add_seeds(in, b);
  add_stopping(in, b);
  add_step_charts(in, b);
  add_all_runs(in, b);
  add_sources(in, b);
  assign_anchors(report);
  return report;
}

}  // namespace genrepro
