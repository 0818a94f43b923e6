#pragma once
// How long a run takes, roughly, before it runs: the cost model `genrepro plan` and the
// sensitivity matrix's plan share. A guide, not a measurement: the evidence's timing says how long
// exactly, and bench/ measures the rates the model assumes.
#include <cstdint>

#include "model/model_config.hpp"
#include "params/experiment_file.hpp"

namespace genrepro {

// Seconds one run takes at most (every token up to its cap), on one thread.
double estimated_run_seconds(const ExpandedRun& run, int64_t prompt_tokens, const Gpt2Config& config);

}  // namespace genrepro
