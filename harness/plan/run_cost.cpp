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

// Per step, each entry of a list control (sequence_bias, bad_words_ids, suppress_tokens,
// logit_bias): its tokens matched against the sequence, its bias or mask applied to the row.
// Measured with `genrepro sample` on rows of 50,257 logits: 30,000 two-token sequence_bias
// entries cost 1.1 s of CPU per row, 37 µs an entry.
constexpr double kControlEntrySeconds = 4e-5;

double control_entries(const FrameworkControls& c) {
  double entries = static_cast<double>(c.suppress_tokens.size() + c.logit_bias.size());
  for (const auto& words : c.bad_words_ids) entries += 1.0 + static_cast<double>(words.size()) / 8.0;
  for (const SequenceBias& b : c.sequence_bias) entries += 1.0 + static_cast<double>(b.tokens.size()) / 8.0;
  return entries;
}

double weights(const Gpt2Config& c) {
  const double C = static_cast<double>(c.n_embd);
  return 12.0 * static_cast<double>(c.n_layer) * C * C + static_cast<double>(c.vocab_size) * C;
}

}  // namespace

double estimated_run_seconds(const ExpandedRun& run, int64_t prompt_tokens, const Gpt2Config& config) {
  const double flops = 2.0 * weights(config);
  const double per_step_controls = control_entries(run.params.sampling.controls) * kControlEntrySeconds;
  double seconds = 0;
  for (int64_t t = 0; t < std::max<int64_t>(run.params.max_new_tokens, 1); ++t) {
    const int64_t positions = run.params.use_cache ? (t == 0 ? prompt_tokens : 1) : prompt_tokens + t;
    seconds += flops / kVectorFlopsPerSecond + static_cast<double>(positions - 1) * flops / kMatrixFlopsPerSecond +
               kStepOverheadSeconds + per_step_controls;
  }
  return seconds;
}

}  // namespace genrepro
