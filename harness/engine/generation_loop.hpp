#pragma once
// The loop, as the article writes it: model -> logits -> sampler chain -> pick -> record -> stop?
#include <chrono>
#include <cstdint>
#include <memory>
#include <functional>
#include <string>
#include <vector>

#include "evidence/run_record.hpp"
#include "params/run_params.hpp"
#include "engine/logits_source.hpp"
#include "engine/run_chain.hpp"

namespace genrepro {

// How a token id is shown in a step record (the tokenizer's display form of one token).
using TokenText = std::function<std::string(int64_t)>;

// Told each new token id as soon as it is picked (generate --stream).
using TokenObserver = std::function<void(int64_t)>;

// T = 0 means greedy, as many APIs do; the loop then takes the argmax and never divides by T.
bool is_greedy(const SamplingParams& s);

// T of the steps' prob_scaled (the article's table): the run's temperature, or 1 when it is 0.
double table_temperature(const SamplingParams& s);

// One run of the loop, advanced a token at a time by whoever owns the model: run_generation
// below (one run, one LogitsSource) or the batched decoder (engine/batched_decoder.hpp: many runs,
// one forward pass for all). Both give a run the same logits, so the same evidence.
//   while (!run.finished()) run.advance(logits of run.ids());
class GenerationRun {
 public:
  // `params` must already be valid (check_run_params). Stops at EOS (eos_token_id, from the
  // model's config) when params.stop_at_eos, at params.max_new_tokens, or when the sequence
  // fills context_size (context_full). Throws SpecError / UsageError for bad params or prompt.
  // `math`: the step math of the numerics its logits will have (LogitsSource::step_math()).
  GenerationRun(const std::vector<int64_t>& prompt_ids, const RunParams& params, int64_t eos_token_id,
                int64_t context_size, const StepMath& math, TokenText token_text, TokenObserver on_token = {});

  // stop? Checked before every step: once true, advance() must not be called again.
  bool finished() const { return finished_; }
  // The sequence so far (prompt + new tokens): the model's input for the next logits.
  const std::vector<int64_t>& ids() const { return ids_; }
  // logits [V] of the token after ids() -> sampler chain -> pick -> record -> stop?
  void advance(const std::vector<float>& logits);
  // The run's evidence; call once, when finished().
  GenerationResult take_result();

 private:
  void check_stop();

  RunParams params_;
  int64_t eos_token_id_;
  int64_t context_size_;
  const StepMath& math_;
  TokenText token_text_;
  TokenObserver on_token_;
  // The run's chain and draw (the article's, Hugging Face's or llama.cpp's preset), seeded once
  // per run like the article's rng and fed this run's own history, so batched runs each keep theirs.
  RunChain chain_;
  std::vector<int64_t> ids_;
  GenerationResult result_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
};

// Runs one generation from `source` (GenerationRun's stop rules).
GenerationResult run_generation(LogitsSource& source, const std::vector<int64_t>& prompt_ids,
                                const RunParams& params, int64_t eos_token_id,
                                const TokenText& token_text, const TokenObserver& on_token = {});

}  // namespace genrepro
