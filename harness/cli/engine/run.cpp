// genrepro run, the part that runs the model (flags and experiment files are checked in cli/run.cpp).
#include <chrono>
#include <optional>
#include <string>

#include "cli/engine/engine_verbs.hpp"
#include "engine/runner.hpp"
#include "evidence/diff_format.hpp"
#include "evidence/evidence.hpp"
#include "evidence/evidence_diff.hpp"
#include "model/model_files.hpp"
#include "util/progress.hpp"

namespace genrepro::cli {

namespace {

// The MLPerf-style determinism check: every run once with recompute (the article's
// use_cache=False) and once with the KV cache; the tokens must not diverge. Probability drift
// is reported but allowed: the two paths multiply matrices of different shapes.
// The first run whose record differs, byte for byte (timing aside), between the batched pass
// and the same runs decoded one at a time; empty when none does.
std::optional<std::string> first_batch_difference(const Evidence& batched, const Evidence& alone) {
  const OrderedJson b = strip_volatile(evidence_to_json(batched));
  const OrderedJson a = strip_volatile(evidence_to_json(alone));
  for (size_t i = 0; i < b["runs"].size() && i < a["runs"].size(); ++i)
    if (b["runs"][i] != a["runs"][i]) return b["runs"][i]["id"].get<std::string>();
  if (b["runs"].size() != a["runs"].size()) return std::string("(run count)");
  return std::nullopt;
}

int check_equivalence(const RunnerOptions& runner, double prob_tolerance, bool json, Console& io) {
  CacheEquivalenceEvidence both = run_with_and_without_cache(runner);
  const std::optional<std::string> batch_difference = first_batch_difference(both.cached, both.cached_alone);
  const std::string batch = both.cached.numerics ? both.cached.numerics->execution.value("batch", OrderedJson(1)).dump() : "1";
  EvidenceDiffOptions options;
  options.prob_tolerance = prob_tolerance;
  const EvidenceDiff diff = diff_cache_equivalence(EvidenceFile{"recompute", std::move(both.recompute)},
                                                   EvidenceFile{"kv-cache", std::move(both.cached)}, options);
  const bool equivalent = tokens_equivalent(diff);
  if (json) {
    OrderedJson verdict = {{"equivalent", equivalent && !batch_difference},
                           {"kv_cache_matches_recompute", equivalent},
                           {"batched_matches_alone", !batch_difference.has_value()},
                           {"first_batched_difference", batch_difference ? OrderedJson(*batch_difference) : OrderedJson(nullptr)},
                           {"numerics", to_string(runner.numerics.mode)},
                           {"diff", diff_to_json(diff)}};
    io.out << verdict.dump(2) << "\n";
    return equivalent && !batch_difference ? kExitOk : kExitDiffer;
  }
  io.out << format_diff_text(diff);
  io.out << "check-equivalence: " << (equivalent ? "KV cache and recompute pick the same tokens"
                                                     : "KV cache and recompute DIVERGE")
            << "\n";
  io.out << "check-equivalence: "
         << (batch_difference ? "batched run " + *batch_difference + " DIFFERS from the same run decoded alone"
                              : std::string("batched runs (batch ") + batch + ") equal the same runs decoded alone, byte for byte")
         << " (numerics " << to_string(runner.numerics.mode) << ")\n";
  return equivalent && !batch_difference ? kExitOk : kExitDiffer;
}

}  // namespace

int run_experiments(const RunRequest& o, Console& io) {
  RunnerOptions runner;
  runner.experiments = o.experiments;
  runner.shard = o.shard;
  runner.threads = o.threads;
  runner.numerics = o.numerics;
  runner.model = resolve_chosen_model(o.model);
  // A live line on a terminal; in a CI log a plain line at most every 10 s (util/progress.hpp).
  runner.progress = &io.err;
  runner.progress_style = progress_style(io.err_is_terminal);
  runner.on_planned = [&](const RunPlan& plan) {
    io.err << runner.model.source_note << "\n";
    io.err << "running " << plan.selected.size() << " of " << plan.runs.size() << " runs";
    if (runner.shard.count > 1) io.err << " (shard " << o.shard_text << ")";
    io.err << " on " << o.threads << (o.threads == 1 ? " thread" : " threads") << ", numerics "
           << to_string(o.numerics.mode) << "\n";
  };
  if (o.check_equivalence) return check_equivalence(runner, o.prob_tolerance, o.json, io);
  const auto start = std::chrono::steady_clock::now();
  const Evidence evidence = genrepro::run_experiments(runner);
  write_evidence(o.out, evidence);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json) {
    int64_t tokens = 0;
    for (const RunRecord& r : evidence.runs) tokens += static_cast<int64_t>(r.result.output_ids.size());
    const OrderedJson summary = {{"evidence", o.out},
                                 {"runs", evidence.runs.size()},
                                 {"new_tokens", tokens},
                                 {"seconds", seconds},
                                 {"tokens_per_second", seconds > 0 ? tokens / seconds : 0.0},
                                 {"numerics", evidence.numerics ? numerics_to_json(*evidence.numerics) : OrderedJson(nullptr)}};
    io.out << summary.dump(2) << "\n";
    return kExitOk;
  }
  io.out << "wrote " << o.out << " (" << evidence.runs.size() << " runs)\n";
  return kExitOk;
}

}  // namespace genrepro::cli
