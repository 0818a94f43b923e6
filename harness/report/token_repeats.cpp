#include "report/token_repeats.hpp"

#include <algorithm>

namespace genrepro {

TokenRepeat longest_repeat(const std::vector<int64_t>& ids) {
  TokenRepeat best;
  const std::size_t n = ids.size();
  // cur[j]: the longest common suffix of ids[..i) and ids[..j), cut so the two spans do not overlap.
  std::vector<std::size_t> prev(n + 1, 0), cur(n + 1, 0);
  for (std::size_t i = 1; i <= n; ++i) {
    std::fill(cur.begin(), cur.end(), 0);
    for (std::size_t j = i + 1; j <= n; ++j) {
      if (ids[i - 1] != ids[j - 1]) continue;
      cur[j] = std::min(prev[j - 1] + 1, j - i);  // spans ending at i and j must not overlap
      if (cur[j] > best.length) best = TokenRepeat{cur[j], i - cur[j], j - cur[j], 0};
    }
    std::swap(prev, cur);
  }
  if (best.length == 0) return best;
  for (std::size_t at = 0; at + best.length <= n;) {
    if (std::equal(ids.begin() + at, ids.begin() + at + best.length, ids.begin() + best.first)) {
      ++best.count;
      at += best.length;
    } else {
      ++at;
    }
  }
  return best;
}

}  // namespace genrepro
