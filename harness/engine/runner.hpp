#pragma once
// `genrepro run`: experiment files in, evidence out. Everything that can be wrong with the input
// is found before the first run starts (experiment files, then the prompts and token budgets
// against the model's context); then the model and tokenizer are loaded once, the selected runs
// execute (concurrently with --threads N, each on one intra-op thread), and the evidence is
// assembled in run-index order, so it never depends on N or on which run finished first.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "evidence/numerics_record.hpp"
#include "engine/llama_engine.hpp"
#include "plan/run_plan.hpp"
#include "params/experiment_file.hpp"
#include "model/model_config.hpp"
#include "model/model_files.hpp"
#include "util/progress.hpp"
#include "util/shard.hpp"
#include "tokenizer/tokenizer.hpp"

namespace genrepro {

struct RunnerOptions {
  std::vector<ExperimentSpec> experiments;  // parsed and checked (load_experiments, override_top_candidates)
  ModelFiles model;
  int threads = 1;                        // cores: BLAS threads and batches (docs/numerics.md)
  NumericsRequest numerics;               // --numerics, --batch, --allow-inexact-batch
  LlamaRequest llama;                     // runs whose engine is llama.cpp (docs/engines.md)
  Shard shard;                            // 1/1 = everything
  std::ostream* progress = nullptr;       // where progress goes, or nullptr for none
  ProgressStyle progress_style = ProgressStyle::live;  // a redrawn line, or plain lines for CI logs
  // Called once everything is checked and before the model loads (the CLI says what will run).
  std::function<void(const struct RunPlan&)> on_planned;

  // Resuming (docs/resume.md). Called once the model is loaded and the numerics chosen, with the
  // header the evidence will carry (no runs); returns the runs finished earlier, which are not
  // run again. Each must be one of this invocation's selected runs, with the same id.
  std::function<std::vector<RunRecord>(const Evidence& header)> resume;
  // Called for every run as it finishes, in finishing order, one call at a time.
  std::function<void(const RunRecord&)> on_run_finished;
  // Set (by a signal handler) to start no further runs: runs in flight finish, then
  // run_experiments throws RunsInterrupted unless every run had already finished.
  const std::atomic<bool>* stop = nullptr;
};

// Thrown by run_experiments when `stop` ended it early. The finished runs were all passed to
// on_run_finished; nothing else was written.
struct RunsInterrupted : std::exception {
  int64_t finished = 0;  // selected runs finished, resumed ones included
  int64_t total = 0;     // selected runs
  RunsInterrupted(int64_t f, int64_t t) : finished(f), total(t) {}
  const char* what() const noexcept override { return "runs interrupted"; }
};

// The model block of the evidence: source, config and the sha256 of every file.
ModelInfo describe_model(const ModelFiles& files, const Gpt2Config& config);

// Plans, loads the model once, runs the selected runs and returns the evidence. Sets libtorch
// and BLAS threads to one per run (prepare_runtime_for_runs) before anything runs.
Evidence run_experiments(const RunnerOptions& o);

// For --check-equivalence: the same selected runs executed three times: every run's use_cache
// overridden to false (recompute, the article's use_cache=False), then to true (the KV cache,
// batched as asked), then to true one run at a time (--batch 1 on one core, same numerics mode).
// Planned, loaded and hashed once; run ids stay those of the experiment files, so the passes
// pair run for run (diff_cache_equivalence; the batched and lone runs must be byte-identical).
struct CacheEquivalenceEvidence {
  Evidence recompute;
  Evidence cached;
  Evidence cached_alone;
};
CacheEquivalenceEvidence run_with_and_without_cache(const RunnerOptions& o);

}  // namespace genrepro
