#pragma once
// The loop, as the article writes it: model -> logits -> sampler chain -> pick -> record -> stop?
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "evidence/run_record.hpp"
#include "spec/run_params.hpp"
#include "engine/logits_source.hpp"
#include "engine/samplers.hpp"

namespace genrepro {

// How a token id is shown in a step record (the tokenizer's display form of one token).
using TokenText = std::function<std::string(int64_t)>;

// T = 0 means greedy, as many APIs do; the loop then takes the argmax and never divides by T.
bool is_greedy(const SamplingParams& s);

// T of the steps' prob_scaled (the article's table): the run's temperature, or 1 when it is 0.
double table_temperature(const SamplingParams& s);

// The distribution a step draws from and records (docs/evidence-format.md): greedy ->
// softmax(logits) at T = 1 (the argmax is taken on the logits); sample -> softmax(chain(logits)).
// logits [V] float32 -> probabilities [V]. replay (engine/replay.hpp) recomputes steps with it.
torch::Tensor final_distribution(const torch::Tensor& logits, bool greedy, const SamplerChain& chain);

// Runs one generation. `params` must already be valid (check_run_params). Stops at EOS
// (eos_token_id, read from the model's config) when params.stop_at_eos, at
// params.max_new_tokens, or when the sequence fills source.context_size() (context_full).
GenerationResult run_generation(LogitsSource& source, const std::vector<int64_t>& prompt_ids,
                                const RunParams& params, int64_t eos_token_id,
                                const TokenText& token_text);

}  // namespace genrepro
