// Strict numerics' record math where it takes a shortcut: the best candidates of a row are found
// in one pass for the few a record lists, and must be what sorting every id gives.
#include "sampling/step_math.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

// torch.topk's indices with ties to the lower id: every id, ordered by logit (largest first) by a
// stable sort, which keeps equal logits in id order.
std::vector<int64_t> literal_order(const std::vector<float>& logits) {
  std::vector<int64_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(), [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  return ids;
}

TEST(StrictStepMath, BestIdsAreTheFirstIdsOfTheWholeSortForEveryCount) {
  const StepMath& math = strict_step_math();
  std::mt19937 rng(3107);
  std::normal_distribution<float> spread(0.0f, 3.0f);
  std::uniform_int_distribution<int> level(0, 5);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const size_t n = trial % 5 == 0 ? 50257 : 1 + static_cast<size_t>(rng() % 300);
    std::vector<float> row(n);
    const int kind = trial % 4;
    for (float& x : row) {
      switch (kind) {
        case 0: x = spread(rng); break;                                // distinct, mostly
        case 1: x = static_cast<float>(level(rng)); break;             // ties everywhere
        case 2: x = level(rng) == 0 ? 7.0f : spread(rng); break;       // a tie at the top
        default: x = level(rng) == 0 ? -0.0f : (level(rng) == 1 ? 0.0f : spread(rng)); break;  // -0 equals +0
      }
    }
    const std::vector<int64_t> order = literal_order(row);
    for (int64_t k : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{63}, int64_t{64}, int64_t{65}, int64_t{200}, static_cast<int64_t>(n)}) {
      if (k > static_cast<int64_t>(n)) continue;
      const std::vector<int64_t> want(order.begin(), order.begin() + k);
      EXPECT_EQ(math.best_ids(row, k), want) << "trial " << trial << " (kind " << kind << "), n " << n << ", k " << k;
      ++compared;
    }
  }
  EXPECT_GE(compared, 200);
}

}  // namespace
}  // namespace genrepro
