// A diff shown to a person (text) and to a program (genrepro.diff/1), docs/diff.md.
#include "compare/diff_format.hpp"

#include "evidence/value_text.hpp"

#include <cstdio>
#include <sstream>

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
  o << "  differences (" << r.field_difference_count << (r.field_difference_count > r.fields.size() ? ", first listed" : "") << "):\n";
  for (const ValueDifference& f : r.fields) {
    o << "    " << f.path << ": " << show_value(f.golden) << " -> " << show_value(f.current);
    if (f.abs_diff) o << " (|d| " << show_delta(*f.abs_diff) << ")";
    o << "\n";
  }
}

void write_block(std::ostream& o, const char* heading, const std::vector<ValueDifference>& differences) {
  if (differences.empty()) return;
  o << heading << "\n";
  for (const ValueDifference& e : differences) o << "  " << e.path << ": " << show_value(e.golden) << " -> " << show_value(e.current) << "\n";
}

template <class T>
OrderedJson optional_json(const std::optional<T>& v) {
  return v ? OrderedJson(*v) : OrderedJson();
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
          {"max_prob_difference", r.max_prob_difference}};
}

}  // namespace

std::string diff_summary_line(const EvidenceDiff& diff) {
  std::string s = "diff: " + std::to_string(diff.runs.size()) + " runs compared, " +
                  std::to_string(diff.runs.size() - diff.differing()) + " agree, " + std::to_string(diff.differing()) + " differ";
  std::string kinds;
  for (Verdict v : kDifferVerdicts)
    if (std::size_t c = diff.count(v)) kinds += (kinds.empty() ? "" : ", ") + std::to_string(c) + " " + to_string(v);
  if (!kinds.empty()) s += " (" + kinds + ")";
  s += "; " + std::to_string(diff.missing.size()) + " missing, " + std::to_string(diff.extra.size()) + " extra";
  s += "; prob tolerance " + show_delta(diff.prob_tolerance);
  return s;
}

std::string format_diff_text(const EvidenceDiff& diff) {
  std::ostringstream o;
  for (const RunDiff& r : diff.runs)
    if (r.verdict != Verdict::agree) write_run(o, r);
  for (const std::string& id : diff.missing) o << "missing run " << id << ": in golden, not in the new evidence\n";
  for (const std::string& id : diff.extra) o << "extra run " << id << ": in the new evidence, not in golden\n";
  write_block(o, "numerics mode differs (docs/numerics.md; a likely cause, not a failure):", diff.numerics);
  write_block(o, "environment differs (likely causes, not failures):", diff.environment);
  write_block(o, "provenance differs (build, model files; not failures):", diff.provenance);
  o << diff_summary_line(diff) << "\n";
  return o.str();
}

OrderedJson diff_to_json(const EvidenceDiff& diff) {
  OrderedJson verdicts = OrderedJson::object();
  for (Verdict v : kDifferVerdicts) verdicts[json_name(v)] = diff.count(v);
  OrderedJson runs = OrderedJson::array();
  for (const RunDiff& r : diff.runs) runs.push_back(run_json(r));
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
            {"verdicts", verdicts}}},
          {"runs", runs},
          {"missing", diff.missing},
          {"extra", diff.extra},
          {"numerics", differences_json(diff.numerics)},
          {"environment", differences_json(diff.environment)},
          {"provenance", differences_json(diff.provenance)}};
}

}  // namespace genrepro
