#pragma once
// The plan of a set of experiments on one model: every run expanded, its prompt encoded and
// checked against the model's context and vocabulary, and the runs a shard executes. No
// libtorch: `genrepro plan` shows it before anything runs, and the runner executes it.
#include <cstdint>
#include <vector>

#include "model/model_config.hpp"
#include "spec/experiment_spec.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/shard.hpp"

namespace genrepro {

// The experiments, checked against the model and expanded; nothing has run.
struct RunPlan {
  std::vector<ExperimentSpec> experiments;
  std::vector<ExpandedRun> runs;                  // all runs, unsharded, in index order
  std::vector<std::vector<int64_t>> prompt_ids;   // per run
  std::vector<int64_t> selected;                  // indices of the runs this shard executes
};

// Encodes the prompts and checks every run against the model's context and vocabulary. Throws
// SpecError / UsageError naming the experiment file and JSON path.
RunPlan plan_runs(const std::vector<ExperimentSpec>& experiments, const Shard& shard, const Gpt2Config& config,
                  const Gpt2Tokenizer& tokenizer);

}  // namespace genrepro
