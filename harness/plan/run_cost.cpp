#include "plan/run_cost.hpp"

#include <algorithm>

namespace genrepro {

namespace {

// Per step: one pass over the weights at matrix-vector speed (2 FLOPs per weight; ~2 GFLOP/s,
// measured on one core here for the GPT-2-small-shaped fixture with the KV cache, 8.4 tokens/s),
// each further position the step computes (a recompute step computes the whole sequence) at
// matrix-matrix speed (~30 GFLOP/s, measured as the tiny fixture's recompute rate), and a fixed
// overhead that dominates tiny models.
constexpr double kVectorFlopsPerSecond = 2.0e9;
constexpr double kMatrixFlopsPerSecond = 30.0e9;
constexpr double kStepOverheadSeconds = 2e-3;

double weights(const Gpt2Config& c) {
  const double C = static_cast<double>(c.n_embd);
  return 12.0 * static_cast<double>(c.n_layer) * C * C + static_cast<double>(c.vocab_size) * C;
}

}  // namespace

double estimated_run_seconds(const ExpandedRun& run, int64_t prompt_tokens, const Gpt2Config& config) {
  const double flops = 2.0 * weights(config);
  double seconds = 0;
  for (int64_t t = 0; t < std::max<int64_t>(run.params.max_new_tokens, 1); ++t) {
    const int64_t positions = run.params.use_cache ? (t == 0 ? prompt_tokens : 1) : prompt_tokens + t;
    seconds += flops / kVectorFlopsPerSecond + static_cast<double>(positions - 1) * flops / kMatrixFlopsPerSecond +
               kStepOverheadSeconds;
  }
  return seconds;
}

}  // namespace genrepro
