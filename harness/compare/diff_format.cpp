// A diff shown to a person (text) and to a program (genrepro.diff/1), docs/diff.md.
#include "compare/diff_format.hpp"

#include "evidence/value_text.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "util/optional_json.hpp"
#include "util/significant_digits.hpp"

namespace genrepro {

namespace {

// Verdicts that make a run differ, in the order the summary counts them.
constexpr Verdict kDifferVerdicts[] = {Verdict::regression, Verdict::kept_set_change, Verdict::sampler_change,
                                       Verdict::params_change, Verdict::near_tie};

std::string fmt_prob(std::optional<double> p) {
  if (!p) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *p);
  return buf;
}

std::string fmt_kept(std::optional<int64_t> k) { return k ? std::to_string(*k) : "-"; }

// Above this many differing runs (or pairs) the text groups them by cause: one full block per
// cause, one line for each further run (30 regressions of one cause were 744 lines).
constexpr std::size_t kGroupAbove = 10;

// Checksums, versions and paths are shown whole (cutting a sha256 in the middle hides the very
// digits a person compares); only values longer than this (torch_config, loaded libraries) are
// summarized, and --json keeps them whole.
constexpr std::size_t kMaxWholeChars = 200;

// Raw per-field differences listed per run in the text: the verdict, the divergence and the
// margins already say what happened, and 20 lines of float pairs per run buried them. --json
// keeps the first kMaxListedFields.
constexpr std::size_t kTextListedFields = 3;

std::string show_whole(const OrderedJson& j) {
  const std::string s = show_json(j);
  return s.size() <= kMaxWholeChars ? s : show_value(j);
}

std::string stop_text(StopReason reason, int64_t step) {
  if (reason == StopReason::eos) return "eos at new token " + std::to_string(step);
  return std::string(to_string(reason)) + " after " + std::to_string(step) + " new tokens";
}

std::string show_token(const TokenAtStep& t) {
  if (!t.id) return "(no token: the run had stopped)";
  return std::to_string(*t.id) + " " + OrderedJson(t.text).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

void write_divergence(std::ostream& o, const Divergence& d) {
  o << "  golden token: " << show_token(d.golden) << "  p(golden) " << fmt_prob(d.golden.prob_in_golden) << "  p(new) "
    << fmt_prob(d.golden.prob_in_new) << "\n";
  o << "  new token:    " << show_token(d.current) << "  p(golden) " << fmt_prob(d.current.prob_in_golden) << "  p(new) "
    << fmt_prob(d.current.prob_in_new) << "\n";
  o << "  margin (best - second): golden " << fmt_prob(d.golden_margin) << ", new " << fmt_prob(d.new_margin) << "; kept: golden "
    << fmt_kept(d.golden_kept) << ", new " << fmt_kept(d.new_kept) << "\n";
}

void write_run(std::ostream& o, const RunDiff& r) {
  o << "run " << r.id << ": " << to_string(r.verdict);
  if (r.divergence)
    o << " at " << new_token_label(r.divergence->step);
  else if (r.first_difference_step)
    o << " at " << new_token_label(*r.first_difference_step);
  o << "\n  why: " << r.reason << "\n";
  if (r.divergence) write_divergence(o, *r.divergence);
  for (const ValueDifference& p : r.params) o << "  param " << p.path << ": " << show_value(p.golden) << " -> " << show_value(p.current) << "\n";
  if (r.fields.empty()) return;
  const std::size_t listed = std::min(r.fields.size(), kTextListedFields);
  o << "  differences (" << r.field_difference_count;
  if (r.field_difference_count > listed)
    o << ", first " << listed << " listed; --json lists " << (r.fields.size() > listed ? "the first " + std::to_string(r.fields.size()) : "no more");
  o << "):\n";
  for (std::size_t i = 0; i < listed; ++i) {
    const ValueDifference& f = r.fields[i];
    o << "    " << f.path << ": " << show_value(f.golden) << " -> " << show_value(f.current);
    if (f.abs_diff) o << " (|d| " << show_delta(*f.abs_diff) << ")";
    o << "\n";
  }
}

// One line for a differing run: its verdict, where, and the two tokens there.
std::string run_brief(const RunDiff& r) {
  std::string s = to_string(r.verdict);
  if (r.divergence) {
    const Divergence& d = *r.divergence;
    s += " at " + new_token_label(d.step) + ": golden " + show_token(d.golden) + ", new " + show_token(d.current);
  } else if (r.first_difference_step) {
    s += " at " + new_token_label(*r.first_difference_step);
  } else {
    s += ": " + r.reason;
  }
  return s;
}

void write_block(std::ostream& o, const char* heading, const std::vector<ValueDifference>& differences) {
  if (differences.empty()) return;
  o << heading << "\n";
  for (const ValueDifference& e : differences) o << "  " << e.path << ": " << show_whole(e.golden) << " -> " << show_whole(e.current) << "\n";
}

// One line: where a pair's tokens part (or that they do not).
std::string pair_tokens_line(const PairedRun& p) {
  const RunDiff& d = p.diff;
  if (!d.divergence) return d.verdict == Verdict::agree ? "the same tokens, every output agrees" : "the same tokens; " + d.reason;
  const Divergence& v = *d.divergence;
  return "parts at " + new_token_label(v.step) + ": golden " + show_token(v.golden) + " p " + fmt_prob(v.golden.prob_in_golden) +
         ", new " + show_token(v.current) + " p " + fmt_prob(v.current.prob_in_new) + " (" + to_string(d.verdict) + ")";
}

std::string pair_effect_line(const PairedRun& p) {
  std::string s = "nucleus (kept): ";
  if (p.shared_steps)
    s += "mean " + three_digits(p.golden_kept_mean) + " \u2192 " + three_digits(p.new_kept_mean) + " over new tokens 1-" +
         std::to_string(p.shared_steps) + " (same context)";
  if (p.golden_kept_median && p.new_kept_median)
    s += std::string(p.shared_steps ? ", " : "") + "median " + three_digits(*p.golden_kept_median) + " \u2192 " +
         three_digits(*p.new_kept_median) + " over each run";
  s += "; stop: ";
  if (p.golden_stop == p.new_stop && p.golden_stop_step == p.new_stop_step)
    s += "the same (" + stop_text(p.golden_stop, p.golden_stop_step) + ")";
  else
    s += stop_text(p.golden_stop, p.golden_stop_step) + " \u2192 " + stop_text(p.new_stop, p.new_stop_step);
  return s;
}

// Pairs grouped by their change, in first-seen order; three lines a pair.
void write_pairs(std::ostream& o, const EvidenceDiff& diff) {
  std::vector<std::string> changes;
  for (const PairedRun& p : diff.pairs)
    if (std::find(changes.begin(), changes.end(), p.change) == changes.end()) changes.push_back(p.change);
  for (const std::string& change : changes) {
    const auto n = std::count_if(diff.pairs.begin(), diff.pairs.end(), [&](const PairedRun& p) { return p.change == change; });
    const PairedRun* first = &*std::find_if(diff.pairs.begin(), diff.pairs.end(), [&](const PairedRun& p) { return p.change == change; });
    o << pair_verdict(*first) << " (" << n << (n == 1 ? " pair" : " pairs")
      << " of runs paired by " << show_json(OrderedJson(diff.pair_by)) << "; other ids, so each still fails the gate)\n";
    for (const PairedRun& p : diff.pairs) {
      if (p.change != change) continue;
      o << "  paired run " << p.golden_id << " \u2192 " << p.new_id << "\n    " << pair_tokens_line(p) << "\n    "
        << pair_effect_line(p) << "\n";
    }
  }
}

// Differing runs: each in full, or, when there are many, grouped by verdict and cause with the
// first run of a group in full and one line for each further one.
void write_runs(std::ostream& o, const EvidenceDiff& diff) {
  std::vector<const RunDiff*> differing;
  for (const RunDiff& r : diff.runs)
    if (r.verdict != Verdict::agree) differing.push_back(&r);
  if (differing.size() <= kGroupAbove) {
    for (const RunDiff* r : differing) write_run(o, *r);
    return;
  }
  std::vector<std::pair<Verdict, std::string>> causes;
  for (const RunDiff* r : differing)
    if (std::find(causes.begin(), causes.end(), std::make_pair(r->verdict, r->cause)) == causes.end())
      causes.emplace_back(r->verdict, r->cause);
  for (const auto& [verdict, cause] : causes) {
    std::vector<const RunDiff*> group;
    for (const RunDiff* r : differing)
      if (r->verdict == verdict && r->cause == cause) group.push_back(r);
    o << to_string(verdict) << " (" << group.size() << (group.size() == 1 ? " run" : " runs") << "): " << cause << "\n";
    write_run(o, *group.front());
    if (group.size() > 1) o << "  and " << group.size() - 1 << " more run(s) with this cause:\n";
    for (std::size_t i = 1; i < group.size(); ++i) o << "    run " << group[i]->id << ": " << run_brief(*group[i]) << "\n";
  }
}

OrderedJson value_difference_json(const ValueDifference& d) {
  OrderedJson j{{"path", d.path}, {"golden", d.golden}, {"new", d.current}};
  if (d.abs_diff) j["abs_diff"] = *d.abs_diff;
  return j;
}

OrderedJson differences_json(const std::vector<ValueDifference>& differences) {
  OrderedJson out = OrderedJson::array();
  for (const ValueDifference& d : differences) out.push_back(value_difference_json(d));
  return out;
}

OrderedJson token_json(const TokenAtStep& t) {
  return {{"token_id", optional_json(t.id)}, {"text", t.text}, {"prob_in_golden", optional_json(t.prob_in_golden)},
          {"prob_in_new", optional_json(t.prob_in_new)}};
}

OrderedJson divergence_json(const std::optional<Divergence>& d) {
  if (!d) return nullptr;
  return {{"step", d->step},
          {"golden", token_json(d->golden)},
          {"new", token_json(d->current)},
          {"margin", {{"golden", optional_json(d->golden_margin)}, {"new", optional_json(d->new_margin)}}},
          {"kept", {{"golden", optional_json(d->golden_kept)}, {"new", optional_json(d->new_kept)}}}};
}

OrderedJson run_json(const RunDiff& r) {
  return {{"id", r.id},
          {"verdict", json_name(r.verdict)},
          {"reason", r.reason},
          {"first_difference_step", optional_json(r.first_difference_step)},
          {"divergence", divergence_json(r.divergence)},
          {"params", differences_json(r.params)},
          {"differences", differences_json(r.fields)},
          {"difference_count", r.field_difference_count},
          {"max_prob_difference", r.max_prob_difference},
          {"logits_identical", optional_json(r.logits_identical)},
          {"logits_first_difference_step", optional_json(r.logits_first_difference_step)}};
}

}  // namespace

std::string diff_summary_line(const EvidenceDiff& diff) {
  std::string s = "diff: " + std::to_string(diff.runs.size()) + " runs compared, " +
                  std::to_string(diff.runs.size() - diff.differing()) + " agree, " + std::to_string(diff.differing()) + " differ";
  std::string kinds;
  for (Verdict v : kDifferVerdicts)
    if (std::size_t c = diff.count(v)) kinds += (kinds.empty() ? "" : ", ") + std::to_string(c) + " " + to_string(v);
  if (!kinds.empty()) s += " (" + kinds + ")";
  if (!diff.pairs.empty())
    s += "; " + std::to_string(diff.pairs.size()) + " paired across a parameter change (other ids: not a pass)";
  s += "; " + std::to_string(diff.missing.size()) + " missing, " + std::to_string(diff.extra.size()) + " extra";
  // Said only when it tells something the counts do not: runs that agree within the tolerance
  // on logits that were not bit-identical (another kernel, thread split or batch).
  const std::size_t not_bit_identical = diff.agreeing_with_other_logits();
  if (not_bit_identical)
    s += "; " + std::to_string(not_bit_identical) + " of the agreeing runs with logits not bit-identical (logits digests)";
  s += "; prob tolerance " + show_delta(diff.prob_tolerance);
  return s;
}

std::string format_diff_text(const EvidenceDiff& diff) {
  std::ostringstream o;
  write_runs(o, diff);
  write_pairs(o, diff);
  for (const std::string& id : diff.missing) o << "missing run " << id << ": in golden, not in the new evidence\n";
  for (const std::string& id : diff.extra) o << "extra run " << id << ": in the new evidence, not in golden\n";
  // genrepro's numerics and llama.cpp's settings decide the bits of their engines' runs: each under its own heading.
  std::vector<ValueDifference> numerics, llama;
  for (const ValueDifference& d : diff.numerics) (d.path.rfind("llama_cpp", 0) == 0 ? llama : numerics).push_back(d);
  write_block(o, "numerics mode differs (docs/numerics.md; a likely cause, not a failure):", numerics);
  write_block(o, "llama.cpp's settings differ (docs/engines.md; a likely cause, not a failure):", llama);
  write_block(o, "environment differs (likely causes, not failures):", diff.environment);
  write_block(o, "provenance differs (build, model files; not failures):", diff.provenance);
  o << diff_summary_line(diff) << "\n";
  return o.str();
}

std::string format_diff_brief(const EvidenceDiff& diff) {
  std::ostringstream o;
  for (const RunDiff& r : diff.runs)
    if (r.verdict != Verdict::agree) o << "run " << r.id << ": " << run_brief(r) << "\n";
  for (const PairedRun& p : diff.pairs) {
    o << "paired run " << p.golden_id << " \u2192 " << p.new_id << ": " << pair_verdict(p) << "; ";
    if (p.diff.divergence)
      o << "parts at " << new_token_label(p.diff.divergence->step) << "\n";
    else
      o << "the same tokens\n";
  }
  for (const std::string& id : diff.missing) o << "missing run " << id << "\n";
  for (const std::string& id : diff.extra) o << "extra run " << id << "\n";
  const std::size_t context = diff.numerics.size() + diff.environment.size() + diff.provenance.size();
  if (context)
    o << "numerics, environment, provenance: " << diff.numerics.size() << ", " << diff.environment.size() << ", "
      << diff.provenance.size() << " difference(s) (likely causes, not failures; listed without --brief)\n";
  o << diff_summary_line(diff) << "\n";
  return o.str();
}

namespace {

OrderedJson pair_json(const PairedRun& p) {
  const auto stop = [](StopReason r, int64_t step) { return OrderedJson{{"reason", to_string(r)}, {"step", step}}; };
  return {{"golden_id", p.golden_id},
          {"new_id", p.new_id},
          {"verdict", pair_verdict(p)},
          {"change", differences_json(p.diff.params)},
          {"cause", json_name(p.diff.verdict)},
          {"reason", p.diff.reason},
          {"first_difference_step", optional_json(p.diff.first_difference_step)},
          {"divergence", divergence_json(p.diff.divergence)},
          {"kept",
           {{"shared_steps", p.shared_steps},
            {"golden_mean", p.shared_steps ? OrderedJson(p.golden_kept_mean) : OrderedJson()},
            {"new_mean", p.shared_steps ? OrderedJson(p.new_kept_mean) : OrderedJson()},
            {"golden_median", optional_json(p.golden_kept_median)},
            {"new_median", optional_json(p.new_kept_median)}}},
          {"stop", {{"golden", stop(p.golden_stop, p.golden_stop_step)}, {"new", stop(p.new_stop, p.new_stop_step)}}},
          {"max_prob_difference", p.diff.max_prob_difference}};
}

}  // namespace

OrderedJson diff_to_json(const EvidenceDiff& diff) {
  OrderedJson verdicts = OrderedJson::object();
  for (Verdict v : kDifferVerdicts) verdicts[json_name(v)] = diff.count(v);
  OrderedJson runs = OrderedJson::array();
  for (const RunDiff& r : diff.runs) runs.push_back(run_json(r));
  OrderedJson pairs = OrderedJson::array();
  for (const PairedRun& p : diff.pairs) pairs.push_back(pair_json(p));
  return {{"schema", "genrepro.diff/1"},
          {"agree", diff.agree()},
          {"prob_tolerance", diff.prob_tolerance},
          {"golden", diff.golden_files},
          {"evidence", diff.evidence_file},
          {"summary",
           {{"compared", diff.runs.size()},
            {"agree", diff.runs.size() - diff.differing()},
            {"differ", diff.differing()},
            {"missing", diff.missing.size()},
            {"extra", diff.extra.size()},
            {"paired", diff.pairs.size()},
            {"verdicts", verdicts}}},
          {"runs", runs},
          {"missing", diff.missing},
          {"extra", diff.extra},
          {"pair_by", diff.pair_by},
          {"pairs", pairs},
          {"numerics", differences_json(diff.numerics)},
          {"environment", differences_json(diff.environment)},
          {"provenance", differences_json(diff.provenance)}};
}

}  // namespace genrepro
