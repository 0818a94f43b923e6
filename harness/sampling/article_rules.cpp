// The article chain's stages (article_rules.hpp), line for line with engine/samplers.cpp's torch
// code: each comment quotes the line it follows.
#include "sampling/article_rules.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "sampling/aten_float.hpp"

namespace genrepro::sampling {

namespace {

constexpr float kMasked = -std::numeric_limits<float>::infinity();

// a before b in torch.sort's order: NaN counts as the largest value, as torch sorts it.
bool greater(float a, float b) { return std::isnan(b) ? false : std::isnan(a) || a > b; }

std::vector<float> gathered(const std::vector<float>& values, const std::vector<size_t>& order) {
  std::vector<float> out(order.size());
  for (size_t i = 0; i < order.size(); ++i) out[i] = values[order[i]];
  return out;
}

}  // namespace

std::vector<size_t> sorted_order(const std::vector<float>& values, bool descending) {
  // torch.sort(stable=False) on CPU (aten/src/ATen/native/cpu/SortingKernel.cpp, sort_kernel) is
  // std::sort over (value, index) pairs compared by value (KeyValueCompDesc / KeyValueCompAsc):
  // the same libstdc++ introsort on the same comparisons leaves equal values in the same order,
  // index order on rows of up to 16 (its insertion sort) and the algorithm's own order above.
  std::vector<std::pair<float, size_t>> pairs(values.size());
  for (size_t i = 0; i < values.size(); ++i) pairs[i] = {values[i], i};
  std::sort(pairs.begin(), pairs.end(), [descending](const std::pair<float, size_t>& a, const std::pair<float, size_t>& b) {
    return descending ? greater(a.first, b.first) : greater(b.first, a.first);
  });
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < pairs.size(); ++i) order[i] = pairs[i].second;
  return order;
}

void temperature_rule(std::vector<float>& logits, double temperature) {
  if (logits.empty()) return;
  if (temperature <= 0) {
    // kept.index_put_({argmax}, logits[argmax]) over a tensor full of -inf
    const size_t best = static_cast<size_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    for (size_t i = 0; i < logits.size(); ++i)
      if (i != best) logits[i] = kMasked;
    return;
  }
  // logits / T: ATen casts the double scalar to the tensor's float32, then divides.
  const float t = static_cast<float>(temperature);
  for (float& v : logits) v = v / t;
}

void top_k_rule(std::vector<float>& logits, int64_t k) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  if (k <= 0 || k >= vocab) return;
  // kth_largest = torch::topk(logits, k)[0][k - 1]
  std::vector<float> values = logits;
  std::nth_element(values.begin(), values.begin() + (k - 1), values.end(), [](float a, float b) { return greater(a, b); });
  const float kth_largest = values[static_cast<size_t>(k - 1)];
  // logits.masked_fill(logits < kth_largest, -inf)
  for (float& v : logits)
    if (v < kth_largest) v = kMasked;
}

void top_p_article_rule(std::vector<float>& logits, double p) {
  if (p >= 1 || logits.empty()) return;
  // sorted_logits, indices = torch.sort(logits, descending=True)
  const std::vector<size_t> indices = sorted_order(logits, /*descending=*/true);
  // cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
  const std::vector<float> cumulative = aten::cumsum(aten::softmax(gathered(logits, indices)));
  // remove = cumulative >= p (float32 against float(p)); remove[1:] = remove[:-1]; remove[0] = False:
  // every token up to and including the first that reaches p stays.
  const float threshold = static_cast<float>(p);
  size_t kept = cumulative.size();
  for (size_t i = 0; i < cumulative.size(); ++i)
    if (cumulative[i] >= threshold) {
      kept = i + 1;
      break;
    }
  // filtered[indices[remove]] = -inf
  for (size_t i = kept; i < indices.size(); ++i) logits[indices[i]] = kMasked;
}

void top_p_hf_rule(std::vector<float>& logits, double p, int64_t min_tokens_to_keep) {
  if (p >= 1 || logits.empty()) return;
  // sorted_logits, sorted_indices = torch.sort(scores, descending=False)
  const std::vector<size_t> sorted_indices = sorted_order(logits, /*descending=*/false);
  // cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
  const std::vector<float> cumulative_probs = aten::cumsum(aten::softmax(gathered(logits, sorted_indices)));
  // sorted_indices_to_remove = cumulative_probs <= (1 - top_p): 1 - p in double, compared as float
  const float threshold = static_cast<float>(1 - p);
  const size_t n = logits.size();
  // sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0
  const size_t removable = n - std::min(n, static_cast<size_t>(std::max<int64_t>(min_tokens_to_keep, 0)));
  for (size_t i = 0; i < removable; ++i)
    if (cumulative_probs[i] <= threshold) logits[sorted_indices[i]] = kMasked;
}

}  // namespace genrepro::sampling
