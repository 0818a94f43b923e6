// genrepro run, the part that runs the model (flags and experiment files are checked in cli/run.cpp).
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
int check_equivalence(const RunnerOptions& runner, double prob_tolerance, Console& io) {
  CacheEquivalenceEvidence both = run_with_and_without_cache(runner);
  EvidenceDiffOptions options;
  options.prob_tolerance = prob_tolerance;
  const EvidenceDiff diff = diff_cache_equivalence(EvidenceFile{"recompute", std::move(both.recompute)},
                                                   EvidenceFile{"kv-cache", std::move(both.cached)}, options);
  io.out << format_diff_text(diff);
  const bool equivalent = tokens_equivalent(diff);
  io.out << "check-equivalence: " << (equivalent ? "KV cache and recompute pick the same tokens"
                                                     : "KV cache and recompute DIVERGE")
            << "\n";
  return equivalent ? kExitOk : kExitDiffer;
}

}  // namespace

int run_experiments(const RunRequest& o, Console& io) {
  RunnerOptions runner;
  runner.experiments = o.experiments;
  runner.shard = o.shard;
  runner.threads = o.threads;
  runner.model = resolve_chosen_model(o.model);
  // A live line on a terminal; in a CI log a plain line at most every 10 s (util/progress.hpp).
  runner.progress = &io.err;
  runner.progress_style = progress_style(io.err_is_terminal);
  runner.on_planned = [&](const RunPlan& plan) {
    io.err << runner.model.source_note << "\n";
    io.err << "running " << plan.selected.size() << " of " << plan.runs.size() << " runs";
    if (runner.shard.count > 1) io.err << " (shard " << o.shard_text << ")";
    io.err << " on " << o.threads << (o.threads == 1 ? " thread" : " threads") << "\n";
  };
  if (o.check_equivalence) return check_equivalence(runner, o.prob_tolerance, io);
  const Evidence evidence = genrepro::run_experiments(runner);
  write_evidence(o.out, evidence);
  io.out << "wrote " << o.out << " (" << evidence.runs.size() << " runs)\n";
  return kExitOk;
}

}  // namespace genrepro::cli
