#pragma once
// The sampler chain as data (llama.cpp's llama-sampling.cpp style): each stage is a small struct
// with a name and apply(logits) -> logits, and the chain is the ordered list the run names in
// SamplingParams::sampler_order. Stages only rescale logits or mask them with -inf; the loop
// turns the result into probabilities (softmax) and picks (token_picker.hpp).
//
// Shapes: every function takes and returns logits [V], float32, and never modifies its input.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "params/run_params.hpp"

namespace genrepro {

// --- the operations, as the article and Hugging Face write them ---

// logits / T (the article: `logits / T`). T <= 0 never divides: it keeps only the argmax
// (greedy's limit), as llama.cpp's temperature sampler does.
torch::Tensor apply_temperature(const torch::Tensor& logits, double temperature);

// Keeps the k largest logits, masks the rest with -inf (Hugging Face's TopKLogitsWarper: every
// logit equal to the k-th largest stays, so ties at the boundary can keep more than k).
// k <= 0 or k >= V: unchanged.
torch::Tensor top_k_filter(const torch::Tensor& logits, int64_t k);

// The article's top_p_filter, line by line: sort descending, softmax, cumsum, remove where
// cumulative >= p, shift the mask right by one (the token that reaches p stays), always keep the
// top token, mask with -inf. p >= 1: unchanged (no stage; the article's loop without a filter).
//
// Computed without sorting the indices (a radix sort of the values instead, ~20x faster than
// torch::sort): the result is top_p_filter_by_sort's bit for bit, ties included, because the
// indices matter only for a tie at the boundary and that case runs the sort
// (tests/unit/engine/fast_top_p_test.cpp holds it to the literal form on thousands of vectors).
torch::Tensor top_p_filter(const torch::Tensor& logits, double p);
// The article's lines literally (torch::sort and all): the reference the fast form is held to.
torch::Tensor top_p_filter_by_sort(const torch::Tensor& logits, double p);

// Hugging Face's TopPLogitsWarper: sort ascending, softmax, cumsum, remove where
// cumulative <= 1 - p, keep the min_tokens_to_keep largest. p >= 1: unchanged (HF adds no
// warper). Agrees with top_p_filter in exact arithmetic, not always in float32 (docs/sampling.md).
// Fast like top_p_filter, and held to the literal form the same way.
torch::Tensor top_p_filter_hf(const torch::Tensor& logits, double p, int64_t min_tokens_to_keep = 1);
torch::Tensor top_p_filter_hf_by_sort(const torch::Tensor& logits, double p, int64_t min_tokens_to_keep = 1);

// --- the chain ---

// One stage of a chain. Which stage it is (SamplerStage, params/run_params.hpp) is also its name.
struct ChainStage {
  virtual ~ChainStage() = default;
  virtual SamplerStage stage() const = 0;
  std::string name() const { return to_string(stage()); }  // "temperature", "top_k", "top_p"
  virtual torch::Tensor apply(const torch::Tensor& logits) const = 0;
};

struct TemperatureStage : ChainStage {
  double temperature;
  explicit TemperatureStage(double t) : temperature(t) {}
  SamplerStage stage() const override { return SamplerStage::temperature; }
  torch::Tensor apply(const torch::Tensor& logits) const override { return apply_temperature(logits, temperature); }
};

struct TopKStage : ChainStage {
  int64_t k;
  explicit TopKStage(int64_t k_) : k(k_) {}
  SamplerStage stage() const override { return SamplerStage::top_k; }
  torch::Tensor apply(const torch::Tensor& logits) const override { return top_k_filter(logits, k); }
};

// The article's rule (TopPRule::article).
struct TopPStage : ChainStage {
  double p;
  explicit TopPStage(double p_) : p(p_) {}
  SamplerStage stage() const override { return SamplerStage::top_p; }
  torch::Tensor apply(const torch::Tensor& logits) const override { return top_p_filter(logits, p); }
};

// Hugging Face's rule (TopPRule::hf).
struct TopPHfStage : ChainStage {
  double p;
  explicit TopPHfStage(double p_) : p(p_) {}
  SamplerStage stage() const override { return SamplerStage::top_p; }
  torch::Tensor apply(const torch::Tensor& logits) const override { return top_p_filter_hf(logits, p); }
};

class SamplerChain {
 public:
  explicit SamplerChain(std::vector<std::unique_ptr<ChainStage>> stages);
  // Each stage in order: logits -> stage 1 -> stage 2 -> ...
  torch::Tensor apply(const torch::Tensor& logits) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<ChainStage>> stages_;
};

// The chain `params.sampler_order` names, with params' temperature, top_k, top_p and top_p_rule.
// `params` is a validated plan (check_run_params): the stages and the rule are already typed.
// An hf or llama.cpp run has no SamplerChain (engine/framework_sampler.hpp): SpecError.
SamplerChain build_sampler_chain(const SamplingParams& params);

}  // namespace genrepro
