#include "support/torch_chains/samplers.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "util/errors.hpp"

namespace genrepro {

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();  // zero probability after softmax

std::unique_ptr<ChainStage> make_top_p_stage(TopPRule rule, double p) {
  switch (rule) {
    case TopPRule::article: return std::make_unique<TopPStage>(p);
    case TopPRule::hf: return std::make_unique<TopPHfStage>(p);
    case TopPRule::llama_cpp: break;  // framework llama.cpp's (sampling/llama_cpp_chain.hpp)
  }
  throw std::logic_error("TopPRule out of range");  // a bug: every enumerator is handled above
}

std::unique_ptr<ChainStage> make_stage(SamplerStage stage, const SamplingParams& params) {
  switch (stage) {
    case SamplerStage::temperature: return std::make_unique<TemperatureStage>(params.temperature);
    case SamplerStage::top_k: return std::make_unique<TopKStage>(params.top_k);
    case SamplerStage::top_p: return make_top_p_stage(params.top_p_rule, params.top_p);
    default: break;  // the frameworks' stages are framework_sampler.hpp's
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

namespace {

// float -> uint32 whose unsigned order is the float's order (-inf < ... < -0 < +0 < ... < inf).
uint32_t order_key(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return (u & 0x80000000u) != 0 ? ~u : (u | 0x80000000u);
}

float from_order_key(uint32_t k) {
  const uint32_t u = (k & 0x80000000u) != 0 ? (k & 0x7fffffffu) : ~k;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// The logits' values in ascending order: what torch::sort's values are (only values: the order
// of equal values is the one thing a value sort cannot say, and the callers check for it).
// An LSD radix sort in three 11-bit passes: about 20x faster than torch::sort over GPT-2's 50,257.
std::vector<float> sorted_values_ascending(const float* data, size_t n) {
  std::vector<uint32_t> keys(n), scratch(n);
  for (size_t i = 0; i < n; ++i) keys[i] = order_key(data[i]);
  for (int shift = 0; shift < 32; shift += 11) {
    size_t count[2049] = {};
    for (uint32_t k : keys) ++count[((k >> shift) & 0x7ffu) + 1];
    for (size_t b = 1; b < 2049; ++b) count[b] += count[b - 1];
    for (uint32_t k : keys) scratch[count[(k >> shift) & 0x7ffu]++] = k;
    keys.swap(scratch);
  }
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = from_order_key(keys[i]);
  return out;
}

// The sorted values as a float32 tensor [V] (ascending, or descending when asked).
torch::Tensor sorted_values_tensor(const torch::Tensor& logits, bool descending) {
  const torch::Tensor contiguous = logits.contiguous();
  std::vector<float> values = sorted_values_ascending(contiguous.data_ptr<float>(), static_cast<size_t>(contiguous.numel()));
  if (descending) std::reverse(values.begin(), values.end());
  torch::Tensor out = torch::empty({static_cast<int64_t>(values.size())}, torch::kFloat32);
  std::memcpy(out.data_ptr<float>(), values.data(), values.size() * sizeof(float));
  return out;
}

// Masks every logit below `threshold` with -inf: the kept set when the sorted position that
// bounds it holds a value no masked logit shares.
torch::Tensor keep_at_least(const torch::Tensor& logits, float threshold) {
  return logits.masked_fill(logits < threshold, kMasked);
}

bool is_nan_free(const torch::Tensor& logits) { return !logits.isnan().any().item<bool>(); }

}  // namespace

torch::Tensor top_p_filter(const torch::Tensor& logits, double p) {
  if (p >= 1) return logits.clone();
  if (logits.dim() != 1 || logits.scalar_type() != torch::kFloat32 || !is_nan_free(logits))
    return top_p_filter_by_sort(logits, p);
  // The article's arithmetic on the sorted values, as top_p_filter_by_sort does it; only the
  // indices of the sort are not computed. They decide nothing unless the last kept value also
  // occurs among the removed ones (a tie at the boundary): then the sort's own order decides,
  // so the full sort runs.
  const torch::Tensor sorted_logits = sorted_values_tensor(logits, /*descending=*/true);
  const torch::Tensor cumulative = torch::softmax(sorted_logits, -1).cumsum(-1);
  const torch::Tensor reached = (cumulative >= p).nonzero();
  const int64_t n = sorted_logits.size(0);
  // remove[1:] = remove[:-1]: the token that reaches p stays, and so does every token before it.
  const int64_t kept = reached.size(0) == 0 ? n : std::min(reached[0][0].item<int64_t>() + 1, n);
  const float* sorted = sorted_logits.data_ptr<float>();
  if (kept < n && !(sorted[kept] < sorted[kept - 1])) return top_p_filter_by_sort(logits, p);
  return kept == n ? logits.clone() : keep_at_least(logits, sorted[kept - 1]);
}

torch::Tensor top_p_filter_by_sort(const torch::Tensor& logits, double p) {
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
  if (p >= 1) return logits.clone();
  if (logits.dim() != 1 || logits.scalar_type() != torch::kFloat32 || min_tokens_to_keep < 1 || !is_nan_free(logits))
    return top_p_filter_hf_by_sort(logits, p, min_tokens_to_keep);
  // HF's arithmetic on the ascending values; the removed tokens are a prefix of that order
  // (cumulative sums only grow), so the kept set is every logit from the first kept value up,
  // unless that value also occurs among the removed ones: then the sort's order decides.
  const torch::Tensor sorted_logits = sorted_values_tensor(logits, /*descending=*/false);
  const torch::Tensor cumulative_probs = sorted_logits.softmax(-1).cumsum(-1);
  const int64_t n = sorted_logits.size(0);
  const int64_t removable = std::max<int64_t>(n - min_tokens_to_keep, 0);
  const int64_t removed =
      std::min((cumulative_probs <= (1 - p)).sum().item<int64_t>(), removable);
  const float* sorted = sorted_logits.data_ptr<float>();
  if (removed == 0) return logits.clone();
  if (!(sorted[removed - 1] < sorted[removed])) return top_p_filter_hf_by_sort(logits, p, min_tokens_to_keep);
  return keep_at_least(logits, sorted[removed]);
}

torch::Tensor top_p_filter_hf_by_sort(const torch::Tensor& logits, double p, int64_t min_tokens_to_keep) {
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
  if (params.framework != Framework::article)
    throw SpecError(std::string("the ") + to_string(params.framework) +
                    " chain reads the run's token history and draws with its own RNG: it is a FrameworkSampler "
                    "(engine/framework_sampler.hpp), not a SamplerChain; this verb does not run framework " +
                    to_string(params.framework) + " yet");
  std::vector<std::unique_ptr<ChainStage>> stages;
  for (SamplerStage stage : params.sampler_order) stages.push_back(make_stage(stage, params));
  return SamplerChain(std::move(stages));
}

}  // namespace genrepro
