// genrepro run: experiment files in, evidence.json out (docs/experiments.md, docs/evidence-format.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/verbs.hpp"
#include "core/errors.hpp"
#include "core/evidence_diff.hpp"
#include "core/evidence.hpp"
#include "core/experiment_spec.hpp"
#include "core/model_files.hpp"
#include "core/progress.hpp"
#include "core/shard.hpp"
#include "engine/runner.hpp"

namespace genrepro::cli {

namespace {

struct RunOptions {
  std::vector<std::string> experiments;
  std::optional<std::string> model;
  std::string out = "reports/evidence.json";
  int threads = 1;
  std::string shard = "1/1";
  std::optional<int64_t> top_candidates;
  bool check_equivalence = false;
  double prob_tolerance = kDefaultProbTolerance;
};

constexpr int kExitAgree = 0;
constexpr int kExitDiffer = 1;

// The MLPerf-style determinism check: every run once with recompute (the article's
// use_cache=False) and once with the KV cache; the tokens must not diverge. Probability drift
// is reported but allowed: the two paths multiply matrices of different shapes.
int check_equivalence(RunnerOptions runner, double prob_tolerance) {
  runner.use_cache = false;
  const Evidence recompute = run_experiments(runner);
  runner.on_planned = nullptr;
  runner.use_cache = true;
  const Evidence cached = run_experiments(runner);
  const EvidenceFile recompute_file{"recompute", evidence_to_json(recompute)};
  const EvidenceFile cached_file{"kv-cache", evidence_to_json(cached)};
  EvidenceDiffOptions options;
  options.prob_tolerance = prob_tolerance;
  const EvidenceDiff diff = diff_cache_equivalence(recompute_file, cached_file, options);
  std::cout << format_diff_text(diff);
  const bool equivalent = tokens_equivalent(diff);
  std::cout << "check-equivalence: " << (equivalent ? "KV cache and recompute pick the same tokens"
                                                     : "KV cache and recompute DIVERGE")
            << "\n";
  return equivalent ? kExitAgree : kExitDiffer;
}

int run_run(const RunOptions& o) {
  // Found out now, not after the last run: a directory can never be replaced by the evidence.
  std::error_code ec;
  if (std::filesystem::is_directory(o.out, ec))
    throw UsageError("--out " + o.out + ": is a directory; give a file path such as " + o.out + "/evidence.json");
  RunnerOptions runner;
  runner.experiment_paths = o.experiments;
  runner.shard = parse_shard(o.shard);
  runner.threads = o.threads;
  runner.top_candidates = o.top_candidates;
  // Experiment files need no model: check them first, so their errors come before any model is
  // located (or made) and stay the only line on stderr.
  load_experiments(o.experiments);
  runner.model = resolve_model({o.model, default_tokenizer_dir(), default_cache_dir()});
  runner.progress = progress_wanted() ? &std::cerr : nullptr;
  runner.on_planned = [&](const RunPlan& plan) {
    std::cerr << runner.model.source_note << "\n";
    std::cerr << "running " << plan.selected.size() << " of " << plan.runs.size() << " runs";
    if (runner.shard.count > 1) std::cerr << " (shard " << o.shard << ")";
    std::cerr << " on " << o.threads << (o.threads == 1 ? " thread" : " threads") << "\n";
  };
  if (o.check_equivalence) return check_equivalence(runner, o.prob_tolerance);
  const Evidence evidence = run_experiments(runner);
  write_evidence(o.out, evidence);
  std::cout << "wrote " << o.out << " (" << evidence.runs.size() << " runs)\n";
  return kExitAgree;
}

}  // namespace

void setup_run(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run experiment files and write evidence.json: every run's parameters, prompt and output ids,\n"
      "text, stop reason and per-step records, with the environment and the model's sha256.\n"
      "Every file is checked before anything runs (docs/experiments.md).");
  cmd->add_option("experiments", o->experiments, "Experiment files (JSON), e.g. experiments/article/*.json")->required();
  cmd->add_option("--model", o->model,
                  "Model directory (HF layout or cache) [default: $GENREPRO_MODEL, the HF cache's gpt2,\n"
                  "else the tiny fixture]");
  cmd->add_option("--out", o->out, "Where to write the evidence (atomically)")->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Runs executed at once, each on one intra-op thread; the evidence does not depend on it")
      ->capture_default_str();
  cmd->add_option("--shard", o->shard,
                  "Run shard I of N: the runs whose index % N == I-1 (join shards with genrepro merge)")
      ->capture_default_str();
  cmd->add_option("--top-candidates", o->top_candidates,
                  "Candidates recorded per step, overriding every experiment's record.top_candidates");
  cmd->add_flag("--check-equivalence", o->check_equivalence,
               "Run every experiment twice, with recompute and with the KV cache, and exit 1 if their\n"
               "tokens differ (first divergence reported as diff does); writes no evidence");
  cmd->add_option("--prob-tolerance", o->prob_tolerance,
                  "With --check-equivalence: probability drift reported beyond this (docs/diff.md)")
      ->capture_default_str();
  cmd->callback([o, &exit_code] { exit_code = run_run(*o); });
}

}  // namespace genrepro::cli
