#include "engine/samplers.hpp"

#include <limits>
#include <stdexcept>

namespace genrepro {

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();  // zero probability after softmax

std::unique_ptr<ChainStage> make_top_p_stage(TopPRule rule, double p) {
  switch (rule) {
    case TopPRule::article: return std::make_unique<TopPStage>(p);
    case TopPRule::hf: return std::make_unique<TopPHfStage>(p);
  }
  throw std::logic_error("TopPRule out of range");  // a bug: every enumerator is handled above
}

std::unique_ptr<ChainStage> make_stage(SamplerStage stage, const SamplingParams& params) {
  switch (stage) {
    case SamplerStage::temperature: return std::make_unique<TemperatureStage>(params.temperature);
    case SamplerStage::top_k: return std::make_unique<TopKStage>(params.top_k);
    case SamplerStage::top_p: return make_top_p_stage(params.top_p_rule, params.top_p);
  }
  throw std::logic_error("SamplerStage out of range");  // a bug: every enumerator is handled above
}

}  // namespace

torch::Tensor apply_temperature(const torch::Tensor& logits, double temperature) {
  if (temperature <= 0) {
    // argmax only: what sampling approaches as T -> 0+ (ties: the first, as torch.argmax).
    auto kept = torch::full_like(logits, kMasked);
    const auto best = logits.argmax();
    kept.index_put_({best}, logits.index({best}));
    return kept;
  }
  return logits / temperature;  // the article: logits / T (float32 tensor / Python float)
}

torch::Tensor top_k_filter(const torch::Tensor& logits, int64_t k) {
  const int64_t vocab = logits.size(-1);
  if (k <= 0 || k >= vocab) return logits.clone();
  // HF: indices_to_remove = scores < torch.topk(scores, top_k)[0][..., -1, None]
  const auto kth_largest = std::get<0>(torch::topk(logits, k)).index({k - 1});
  return logits.masked_fill(logits < kth_largest, kMasked);
}

torch::Tensor top_p_filter(const torch::Tensor& logits, double p) {
  using torch::indexing::Slice;
  if (p >= 1) return logits.clone();
  // sorted_logits, indices = torch.sort(logits, descending=True)
  const auto [sorted_logits, indices] = torch::sort(logits, /*dim=*/-1, /*descending=*/true);
  // Running probability total, from most to least likely.
  const auto cumulative = torch::softmax(sorted_logits, -1).cumsum(-1);
  auto remove = cumulative >= p;
  // remove[1:] = remove[:-1].clone(): shift right so the token that reaches p stays in.
  remove.index_put_({Slice(1, torch::indexing::None)}, remove.index({Slice(torch::indexing::None, -1)}).clone());
  remove.index_put_({0}, false);  // Always keep the most likely token.
  auto filtered = logits.clone();
  // filtered[indices[remove]] = -float("inf")
  filtered.index_put_({indices.index({remove})}, kMasked);
  return filtered;
}

torch::Tensor top_p_filter_hf(const torch::Tensor& logits, double p, int64_t min_tokens_to_keep) {
  using torch::indexing::Slice;
  if (p >= 1) return logits.clone();
  // sorted_logits, sorted_indices = torch.sort(scores, descending=False)
  const auto [sorted_logits, sorted_indices] = torch::sort(logits, /*dim=*/-1, /*descending=*/false);
  const auto cumulative_probs = sorted_logits.softmax(-1).cumsum(-1);
  // Remove tokens with cumulative top_p above the threshold (token with 0 are kept)
  auto sorted_indices_to_remove = cumulative_probs <= (1 - p);
  // Keep at least min_tokens_to_keep
  sorted_indices_to_remove.index_put_({Slice(-min_tokens_to_keep, torch::indexing::None)}, false);
  // scatter sorted tensors to original indexing
  const auto indices_to_remove = sorted_indices_to_remove.scatter(0, sorted_indices, sorted_indices_to_remove);
  return logits.masked_fill(indices_to_remove, kMasked);
}

SamplerChain::SamplerChain(std::vector<std::unique_ptr<ChainStage>> stages) : stages_(std::move(stages)) {}

torch::Tensor SamplerChain::apply(const torch::Tensor& logits) const {
  torch::Tensor current = logits;
  for (const auto& stage : stages_) current = stage->apply(current);
  return stages_.empty() ? logits.clone() : current;
}

std::vector<std::string> SamplerChain::names() const {
  std::vector<std::string> names;
  for (const auto& stage : stages_) names.push_back(stage->name());
  return names;
}

SamplerChain build_sampler_chain(const SamplingParams& params) {
  std::vector<std::unique_ptr<ChainStage>> stages;
  for (SamplerStage stage : params.sampler_order) stages.push_back(make_stage(stage, params));
  return SamplerChain(std::move(stages));
}

}  // namespace genrepro
