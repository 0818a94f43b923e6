#include "compare/replay_report.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "evidence/value_text.hpp"
#include "util/optional_json.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// Significant digits of drift numbers in the readable table (the JSON keeps every digit).
constexpr int kShownDigits = 3;

std::string shown(double v) {
  std::ostringstream out;
  out << std::setprecision(kShownDigits) << v;
  return out.str();
}

OrderedJson stage_difference_json(const std::optional<StageDifference>& d) {
  if (!d) return nullptr;
  return {{"step", d->step}, {"stage", d->stage}, {"golden_kept", optional_json(d->golden_kept)}, {"now_kept", optional_json(d->now_kept)}};
}

std::string kept_text(const std::optional<int64_t>& k) { return k ? std::to_string(*k) : std::string("no such stage"); }

// One line per framework run whose stages now keep other counts (not a failure: see ReplayRun).
void write_stage_lines(std::ostringstream& out, const ReplayReport& report) {
  for (const ReplayRun& r : report.runs) {
    if (!r.first_stage_difference) continue;
    const StageDifference& d = *r.first_stage_difference;
    out << "stages: " << r.id << ": " << r.stage_steps_differing << " of " << r.stage_steps_compared
        << " steps keep other counts; first at " << new_token_label(d.step) << ", stage " << d.stage << ": golden "
        << kept_text(d.golden_kept) << ", now " << kept_text(d.now_kept) << " (shown, not failed: drift can move a stage's boundary)\n";
  }
}

OrderedJson drift_to_json(const Drift& d) {
  return {{"compared", d.compared},
          {"max_abs", d.max},
          {"mean_abs", d.mean()},
          {"max_step", optional_json(d.max_step)},
          {"max_token_id", optional_json(d.max_token_id)},
          {"infinite", d.infinite},
          {"first_infinite_step", optional_json(d.first_infinite_step)}};
}

}  // namespace

const char* to_string(ReplayForward f) {
  switch (f) {
    case ReplayForward::as_run: return "as-run";
    case ReplayForward::recompute: return "recompute";
    case ReplayForward::cached: return "cached";
  }
  return "as-run";
}

ReplayForward parse_replay_forward(const std::string& text) {
  for (ReplayForward f : {ReplayForward::as_run, ReplayForward::recompute, ReplayForward::cached})
    if (text == to_string(f)) return f;
  throw UsageError("--forward " + text + ": allowed: as-run (each run's own use_cache), recompute or cached");
}

void Drift::add(double golden_prob, double current_prob, int64_t step, int64_t token_id) {
  if (golden_prob == current_prob) {  // bit-identical (also both 0): no drift
    ++compared;
    return;
  }
  if (golden_prob <= 0 || current_prob <= 0) {  // log 0 = -inf on one side only
    ++infinite;
    if (!first_infinite_step) first_infinite_step = step;
    return;
  }
  const double d = std::fabs(std::log(current_prob) - std::log(golden_prob));
  ++compared;
  sum += d;
  if (d > max) {
    max = d;
    max_step = step;
    max_token_id = token_id;
  }
}

bool ReplayRun::within(double tolerance) const {
  return logp.max <= tolerance && logp_unfiltered.max <= tolerance && logp.infinite == 0 && logp_unfiltered.infinite == 0;
}

std::size_t ReplayReport::beyond_tolerance() const {
  std::size_t n = 0;
  for (const ReplayRun& r : runs) n += r.within(logprob_tolerance) ? 0 : 1;
  return n;
}

std::string describe_mismatch(const ModelMismatch& m) {
  return m.golden_file + " was made with model.safetensors sha256 " + m.golden_sha256 + ", the model replayed has " +
         m.model_sha256 + "; drift against other weights measures nothing";
}

std::string replay_summary_line(const ReplayReport& report) {
  const std::size_t beyond = report.beyond_tolerance();
  std::ostringstream out;
  out << "replay: " << report.runs.size() << " runs, " << report.runs.size() - beyond << " within tolerance "
      << shown(report.logprob_tolerance) << ", " << beyond << " beyond; max |Δ log p| " << shown(report.logp.max);
  // Steps named as every verb names them (evidence/value_text.hpp): "new token 4 (steps[3])".
  if (!report.max_run.empty()) out << " (" << report.max_run << " at " << new_token_label(report.logp.max_step.value_or(0)) << ")";
  out << ", mean " << shown(report.logp.mean()) << " over " << report.logp.compared << " compared; max |Δ log p_t1| "
      << shown(report.logp_unfiltered.max) << "; " << report.logp.infinite << " golden tokens outside the kept set";
  return out.str();
}

std::string replay_digest_line(const ReplayReport& report) {
  std::size_t compared = 0, identical = 0;
  const ReplayRun* first_differing = nullptr;
  for (const ReplayRun& r : report.runs) {
    if (r.digests.compared == 0) continue;
    ++compared;
    if (r.digests.all_equal()) ++identical;
    else if (!first_differing) first_differing = &r;
  }
  if (compared == 0) return "logits: the golden records no logits digests of this build's algorithm; only the drift above was compared";
  std::ostringstream out;
  out << "logits: " << identical << " of " << compared << " runs bit-identical to the golden at every step (digests)";
  if (first_differing)
    out << "; " << compared - identical << (compared - identical == 1 ? " differs" : " differ") << " (first: " << first_differing->id << " from "
        << new_token_label(first_differing->digests.first_difference.value_or(0)) << ")";
  if (compared < report.runs.size()) out << "; " << report.runs.size() - compared << " runs without digests";
  return out.str();
}

std::string format_replay_text(const ReplayReport& report) {
  std::size_t id_width = 3;
  for (const ReplayRun& r : report.runs) id_width = std::max(id_width, r.id.size());
  std::ostringstream out;
  out << "replay of " << report.golden_files.size() << " golden file(s) against " << report.model_dir << " (forward "
      << to_string(report.forward) << (report.numerics == NumericsMode::strict ? " in strict numerics" : "") << ", tolerance " << shown(report.logprob_tolerance) << " in log p)\n";
  const auto row = [&](const std::string& id, const std::string& path, const std::string& steps, const std::string& max,
                       const std::string& max_step, const std::string& mean, const std::string& max_t1,
                       const std::string& outside, const std::string& own, const std::string& verdict) {
    out << std::left << std::setw(static_cast<int>(id_width)) << id << "  " << std::setw(9) << path << std::right
        << std::setw(10) << steps << std::setw(13) << max << std::setw(10) << max_step << std::setw(13) << mean
        << std::setw(13) << max_t1 << std::setw(9) << outside << std::setw(11) << own << "  " << verdict << "\n";
  };
  // "at token" and "own pick" count new tokens from 1, as "new token N" does everywhere else.
  row("run", "forward", "steps", "max|dlogp|", "at token", "mean|dlogp|", "max|dlogp1|", "outside", "own pick", "");
  for (const ReplayRun& r : report.runs) {
    row(r.id, r.use_cache ? "cached" : "recompute",
        r.first_prediction ? std::to_string(r.logp.compared + r.logp.infinite) + " top" : std::to_string(r.steps),
        shown(r.logp.max), r.logp.max_step ? std::to_string(*r.logp.max_step + 1) : "-", shown(r.logp.mean()),
        shown(r.logp_unfiltered.max), std::to_string(r.outside_kept()),
        r.first_prediction ? "-" : r.own_choice_diverges_at ? "token " + std::to_string(*r.own_choice_diverges_at + 1) : "same",
        r.within(report.logprob_tolerance) ? "ok" : "BEYOND");
  }
  write_stage_lines(out, report);
  for (const ModelMismatch& m : report.model_mismatches) out << "warning: " << describe_mismatch(m) << "\n";
  out << replay_digest_line(report) << "\n";
  out << replay_summary_line(report) << "\n";
  return out.str();
}

OrderedJson replay_to_json(const ReplayReport& report) {
  OrderedJson runs = OrderedJson::array();
  for (const ReplayRun& r : report.runs) {
    runs.push_back({{"id", r.id},
                    {"golden_file", r.golden_file},
                    {"forward", r.use_cache ? "cached" : "recompute"},
                    {"first_prediction", r.first_prediction},
                    {"steps", r.steps},
                    {"within", r.within(report.logprob_tolerance)},
                    {"outside_kept", r.outside_kept()},
                    {"logp", drift_to_json(r.logp)},
                    {"logp_unfiltered", drift_to_json(r.logp_unfiltered)},
                    {"own_choice_diverges_at", optional_json(r.own_choice_diverges_at)},
                    {"logits_digests",
                     {{"compared", r.digests.compared},
                      {"equal", r.digests.equal},
                      {"first_difference", optional_json(r.digests.first_difference)}}},
                    {"stages",
                     {{"steps_compared", r.stage_steps_compared},
                      {"steps_differing", r.stage_steps_differing},
                      {"first_difference", stage_difference_json(r.first_stage_difference)}}}});
  }
  OrderedJson mismatches = OrderedJson::array();
  for (const ModelMismatch& m : report.model_mismatches)
    mismatches.push_back({{"golden", m.golden_file}, {"golden_sha256", m.golden_sha256}, {"model_sha256", m.model_sha256}});
  const std::size_t beyond = report.beyond_tolerance();
  return {{"schema", "genrepro.replay/1"},
          {"within", beyond == 0},
          {"logprob_tolerance", report.logprob_tolerance},
          {"forward", to_string(report.forward)},
          {"numerics", to_string(report.numerics)},
          {"golden", report.golden_files},
          {"model", {{"path", report.model_dir}, {"sha256", report.model_sha256}}},
          {"model_mismatches", mismatches},
          {"summary",
           {{"runs", report.runs.size()},
            {"within", report.runs.size() - beyond},
            {"beyond", beyond},
            {"max_run", report.max_run.empty() ? OrderedJson(nullptr) : OrderedJson(report.max_run)},
            {"logp", drift_to_json(report.logp)},
            {"logp_unfiltered", drift_to_json(report.logp_unfiltered)},
            {"outside_kept", report.logp.infinite}}},
          {"runs", runs}};
}

}  // namespace genrepro
