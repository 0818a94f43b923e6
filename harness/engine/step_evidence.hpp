#pragma once
// What one step leaves as evidence (evidence/run_record.hpp StepRecord): the chosen token, its
// probabilities, the kept-set size, the top-N candidates, the rest mass, the margins, the entropy.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/run_record.hpp"
#include "params/run_params.hpp"
#include "sampling/step_math.hpp"
#include "engine/generation_loop.hpp"

namespace genrepro {

struct StepInputs {
  const std::vector<float>& logits;        // [V] float32, as the model gave them
  const std::vector<float>& final_probs;   // [V] the distribution the token was drawn from
  bool greedy = false;                     // kept = 1; final_probs is softmax(logits) at T = 1
  double table_temperature = 1;            // T of prob_scaled (the article's table); > 0
  int64_t top_candidates = 5;
};

// Fills every StepRecord field but `step`. `chosen` is empty only for max_new_tokens == 0.
// Costs one softmax or two over V and a top-N selection (no full sort), in `math`: the step math
// of the numerics the logits came from.
StepRecord describe_step(const StepInputs& in, std::optional<int64_t> chosen, const TokenText& token_text,
                         const StepMath& math);

// The step record's logits_digest (evidence/logits_digest.hpp) of a [V] float32 row, all V
// values. The loop takes it of the model's row before anything else touches it.
std::string logits_row_digest(const std::vector<float>& logits);

}  // namespace genrepro
