#pragma once
// The run's sampler chain as the loop steps it: the one chain of sampling/chain.hpp, made from the
// run's preset with the row math of the run's numerics (sampling/step_math.hpp), fed the model's logits row,
// and read back as what a step record needs (a [V] distribution, the pick, the draw's margin, each
// stage's kept-set count). GenerationRun and replay both step runs through it, so a replayed step
// is computed as the run computed it.
#include <cstdint>
#include <optional>
#include <vector>

#include "evidence/run_record.hpp"
#include "params/run_params.hpp"
#include "sampling/chain.hpp"
#include "sampling/row_math.hpp"

namespace genrepro {

struct RunStep {
  std::vector<float> final_probs;  // [V]: the distribution the record reads (below)
  bool argmax = false;             // the pick is the argmax: the record's kept set is 1
  std::optional<int64_t> token;    // empty when asked not to pick
  std::vector<StageKept> stages;   // each stage with its kept-set count (frameworks' runs only)
  std::optional<DrawRecord> draw;  // how close a sampled pick came to another token
};

class RunChain {
 public:
  // `s` is checked (check_run_params); `history` is the prompt; `eos_token_id` the model's;
  // `math` the row math of the numerics the logits come from (StepMath::chain()), kept by reference.
  RunChain(const SamplingParams& s, std::vector<int64_t> history, int64_t eos_token_id, const sampling::RowMath& math);

  // logits [V] float32 (the model's row, all finite) -> the chain -> distribution -> pick.
  // `step_index` names the step in errors. `pick` false: the distribution only, no draw.
  // final_probs: for an argmax pick, softmax of the scores the chain left (the raw logits for the
  // article's greedy loop, Hugging Face's processed scores for its greedy); otherwise the
  // distribution drawn from. Throws NumericsError ("step 3: ...") when nothing is left to draw
  // from, UsageError when a control names a token id outside the model's vocabulary.
  RunStep step(const std::vector<float>& logits, int64_t step_index, bool pick);
  // The token that follows (the picked one, or the golden one when replaying).
  void accept(int64_t token) { chain_.accept(token); }
  // Goes on from another history (prompt_length: where its prompt ends) with the same generator:
  // one generator over unrelated rows, as the framework reference tests draw.
  void restart(std::vector<int64_t> history, int64_t prompt_length);

 private:
  SamplingParams params_;
  int64_t eos_token_id_;
  const sampling::RowMath& math_;
  sampling::Chain chain_;
  bool argmax_;
  bool records_stages_;
  bool vocabulary_checked_ = false;
};

}  // namespace genrepro
