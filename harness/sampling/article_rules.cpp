// The article chain's stages (article_rules.hpp), line for line with the article's torch code:
// each comment quotes the line it follows.
#include "sampling/article_rules.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>


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

// The values in ascending order (what torch.sort's values are), for a row without NaN: an LSD
// radix sort of the finite values in two 16-bit digits, after the -infinity entries (one bit
// pattern, so only their count matters: most of the row once top-k has masked it). Two wide
// digits rather than three of 11 bits: logits share their top bits, so a narrow top digit sends
// run after run of keys to one counter, each increment waiting for the last (1.6x slower on a
// vocabulary of logits). A digit all keys share leaves the order as it is, so its pass is not made.
// -0 sorts before +0 here and may not in torch.sort, which compares them equal; they are the only
// values a value sort can order differently, and as equal values at a boundary they send the
// caller to the pair sort.
std::vector<float> sorted_values_ascending(const std::vector<float>& values) {
  constexpr int kDigitBits = 16;
  constexpr uint32_t kBuckets = 1u << kDigitBits;
  std::vector<uint32_t> keys;
  keys.reserve(values.size());
  for (float v : values)
    if (v != kMasked) keys.push_back(order_key(v));
  const size_t finite = keys.size();
  std::vector<uint32_t> count(2 * kBuckets, 0), scratch(finite);
  for (uint32_t k : keys) {
    ++count[k & (kBuckets - 1)];
    ++count[kBuckets + (k >> kDigitBits)];
  }
  for (int d = 0; d < 2; ++d) {
    const int shift = d * kDigitBits;
    uint32_t* digit = count.data() + d * kBuckets;
    if (finite == 0 || digit[(keys[0] >> shift) & (kBuckets - 1)] == finite) continue;
    uint32_t start = 0;
    for (uint32_t b = 0; b < kBuckets; ++b) start += std::exchange(digit[b], start);
    for (uint32_t k : keys) scratch[digit[(k >> shift) & (kBuckets - 1)]++] = k;
    keys.swap(scratch);
  }
  std::vector<float> out(values.size(), kMasked);
  const size_t masked = values.size() - finite;
  for (size_t i = 0; i < finite; ++i) out[masked + i] = from_order_key(keys[i]);
  return out;
}

bool has_nan(const std::vector<float>& values) {
  return std::any_of(values.begin(), values.end(), [](float v) { return std::isnan(v); });
}

// Masks every logit below `threshold`: the kept set when the value that bounds it occurs only on
// the kept side.
void keep_at_least(std::vector<float>& logits, float threshold) {
  for (float& v : logits)
    if (v < threshold) v = kMasked;
}

// How many of the sorted values the article's top-p keeps: every one up to and including the first
// whose cumulative probability reaches p.
size_t article_kept(const std::vector<float>& cumulative, float threshold) {
  for (size_t i = 0; i < cumulative.size(); ++i)
    if (cumulative[i] >= threshold) return i + 1;
  return cumulative.size();
}

// How many of the ascending values Hugging Face's top-p removes: those whose cumulative
// probability stays at or below 1 - p, never the last `keep`.
size_t hf_removed(const std::vector<float>& cumulative, float threshold, int64_t keep) {
  const size_t n = cumulative.size();
  const size_t removable = n - std::min(n, static_cast<size_t>(std::max<int64_t>(keep, 0)));
  size_t removed = 0;
  for (size_t i = 0; i < removable; ++i) removed += cumulative[i] <= threshold ? 1 : 0;
  return removed;
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

void top_p_article_rule(std::vector<float>& logits, double p, const RowMath& math) {
  if (p >= 1 || logits.empty()) return;
  // remove = cumulative >= p (float32 against float(p)); remove[1:] = remove[:-1]; remove[0] = False:
  // every token up to and including the first that reaches p stays.
  const float threshold = static_cast<float>(p);
  if (!has_nan(logits)) {
    std::vector<float> sorted_logits = sorted_values_ascending(logits);
    std::reverse(sorted_logits.begin(), sorted_logits.end());
    const size_t kept = article_kept(math.cumsum(math.softmax(sorted_logits)), threshold);
    if (kept == sorted_logits.size()) return;
    if (sorted_logits[kept] < sorted_logits[kept - 1]) return keep_at_least(logits, sorted_logits[kept - 1]);
  }
  // sorted_logits, indices = torch.sort(logits, descending=True)
  const std::vector<size_t> indices = sorted_order(logits, /*descending=*/true);
  // cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
  const size_t kept = article_kept(math.cumsum(math.softmax(gathered(logits, indices))), threshold);
  // filtered[indices[remove]] = -inf
  for (size_t i = kept; i < indices.size(); ++i) logits[indices[i]] = kMasked;
}

void top_p_hf_rule(std::vector<float>& logits, double p, const RowMath& math, int64_t min_tokens_to_keep) {
  if (p >= 1 || logits.empty()) return;
  // sorted_indices_to_remove = cumulative_probs <= (1 - top_p): 1 - p in double, compared as float;
  // sorted_indices_to_remove[..., -min_tokens_to_keep:] = 0. Cumulative sums only grow, so the
  // removed tokens are a prefix of the ascending order.
  const float threshold = static_cast<float>(1 - p);
  if (!has_nan(logits) && min_tokens_to_keep >= 1) {
    const std::vector<float> sorted_logits = sorted_values_ascending(logits);
    const size_t removed = hf_removed(math.cumsum(math.softmax(sorted_logits)), threshold, min_tokens_to_keep);
    if (removed == 0) return;
    if (sorted_logits[removed - 1] < sorted_logits[removed]) return keep_at_least(logits, sorted_logits[removed]);
  }
  // sorted_logits, sorted_indices = torch.sort(scores, descending=False)
  const std::vector<size_t> sorted_indices = sorted_order(logits, /*descending=*/false);
  // cumulative_probs = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
  const size_t removed = hf_removed(math.cumsum(math.softmax(gathered(logits, sorted_indices))), threshold, min_tokens_to_keep);
  for (size_t i = 0; i < removed; ++i) logits[sorted_indices[i]] = kMasked;
}

}  // namespace genrepro::sampling
