#pragma once
// The chains of the frameworks (docs/sampling.md): Hugging Face generate()'s logits
// processors and warpers with torch.multinomial, and llama.cpp's sampler chain with its dist
// draw. Unlike the article's chain (samplers.hpp), these read the run's history (repetition
// penalties, n-gram bans, minimum lengths) and, for llama.cpp, draw as part of the chain, so one
// FrameworkSampler per run takes the logits and the token history and returns the step: the final
// distribution, the token and every stage's kept-set count.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <torch/torch.h>

#include "evidence/run_record.hpp"
#include "params/run_params.hpp"

namespace genrepro {

// What the chain may read besides the logits.
struct ChainHistory {
  const std::vector<int64_t>& ids;  // the sequence so far: prompt + new tokens
  int64_t prompt_length = 0;
  int64_t eos_token_id = -1;
};

struct FrameworkStep {
  torch::Tensor final_probs;     // [V] float32: the distribution the token is drawn from
  std::optional<int64_t> token;  // the token picked (empty when asked not to pick)
  std::vector<StageKept> stages; // each stage that ran, in order, with its kept-set count
  std::optional<DrawRecord> draw;  // how close the draw came to another token (sampled picks only)
};

class FrameworkSampler {
 public:
  virtual ~FrameworkSampler() = default;
  // logits [V] float32 (the model's, all finite) -> the framework's chain -> distribution -> pick.
  // `pick` false: the distribution only, no draw (a first-prediction record; no RNG consumed).
  // Throws NumericsError naming the step when the chain leaves nothing to draw from.
  virtual FrameworkStep step(const torch::Tensor& logits, const ChainHistory& history, bool pick) = 0;
};

// The sampler of `s.framework` (hf or llama.cpp), seeded once with s.seed. `s` is checked
// (check_run_params). hf greedy (mode greedy or temperature 0): the processors, then argmax.
std::unique_ptr<FrameworkSampler> make_framework_sampler(const SamplingParams& s);

// Hugging Face's processors one by one, on scores [1, V] float32 (exposed for the reference tests).
namespace hf {
torch::Tensor sequence_bias(const torch::Tensor& scores, const std::vector<int64_t>& ids, const std::vector<SequenceBias>& biases);
torch::Tensor repetition_penalty(const torch::Tensor& scores, const std::vector<int64_t>& ids, double penalty);
torch::Tensor no_repeat_ngram(const torch::Tensor& scores, const std::vector<int64_t>& ids, int64_t n);
torch::Tensor bad_words(const torch::Tensor& scores, const std::vector<int64_t>& ids,
                        const std::vector<std::vector<int64_t>>& bad_words_ids, int64_t eos_token_id);
torch::Tensor mask_eos_below(const torch::Tensor& scores, int64_t length, int64_t minimum, int64_t eos_token_id);
torch::Tensor suppress_tokens(const torch::Tensor& scores, const std::vector<int64_t>& tokens);
torch::Tensor temperature(const torch::Tensor& scores, double t);
torch::Tensor top_k(const torch::Tensor& scores, int64_t k);
torch::Tensor top_p(const torch::Tensor& scores, double p);
torch::Tensor min_p(const torch::Tensor& scores, double p);
torch::Tensor typical(const torch::Tensor& scores, double mass);
torch::Tensor epsilon(const torch::Tensor& scores, double epsilon);
torch::Tensor eta(const torch::Tensor& scores, double epsilon);
}  // namespace hf

}  // namespace genrepro
