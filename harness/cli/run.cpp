// genrepro run: experiment files in, evidence.json out (docs/experiments.md, docs/evidence-format.md).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/verbs.hpp"
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
};

void run_run(const RunOptions& o) {
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
  const Evidence evidence = run_experiments(runner);
  write_evidence(o.out, evidence);
  std::cout << "wrote " << o.out << " (" << evidence.runs.size() << " runs)\n";
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
  cmd->callback([o, &exit_code] {
    run_run(*o);
    exit_code = 0;
  });
}

}  // namespace genrepro::cli
