#include "support/torch_chains/multinomial_race.hpp"

#include <cmath>
#include <mutex>

namespace genrepro {

namespace {

// at::uniform_real_distribution<double>(0, 1) over random64(): the low 53 bits, scaled.
constexpr uint64_t kMantissaMask = (uint64_t{1} << 53) - 1;
constexpr double kTwoToMinus53 = 1.0 / static_cast<double>(uint64_t{1} << 53);

// at::exponential_distribution<double>(1): -1/lambda * log(1 - u), then stored as float.
float exponential_from(uint64_t bits) {
  const double u = static_cast<double>(bits & kMantissaMask) * kTwoToMinus53;
  return static_cast<float>(-1.0 / 1.0 * std::log(1.0 - u));
}

bool acceptable(const float* probs, int64_t n) {
  bool any_positive = false;
  for (int64_t i = 0; i < n; ++i) {
    if (!(probs[i] >= 0) || std::isinf(probs[i])) return false;
    any_positive = any_positive || probs[i] > 0;
  }
  return any_positive;
}

}  // namespace

std::optional<RacePick> multinomial_race_pick(const float* probs, int64_t n, at::CPUGeneratorImpl& generator) {
  if (n <= 0 || !acceptable(probs, n)) return std::nullopt;
  std::lock_guard<std::mutex> lock(generator.mutex_);
  RaceLeaders leaders;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = generator.random64();
    // p = 0: 0 / q is 0 for every q > 0; only q = 0 (u = 0 exactly) gives 0 / -0 = NaN.
    const bool needs_draw = probs[i] > 0 || (bits & kMantissaMask) == 0;
    // A ratio of 0 can neither beat a winner (ratios are >= 0, or a NaN that already won) nor
    // give a margin (a runner-up needs a ratio > 0): it is offered only while there is no winner,
    // as argmax of all-zero ratios takes the first. Top-p leaves most entries at 0.
    if (needs_draw) leaders.offer(i, probs[i] / exponential_from(bits));
    else if (leaders.winner() < 0) leaders.offer(i, 0.0f);
  }
  return RacePick{leaders.winner(), leaders.margin()};
}

std::optional<int64_t> multinomial_race(const float* probs, int64_t n, at::CPUGeneratorImpl& generator) {
  const std::optional<RacePick> pick = multinomial_race_pick(probs, n, generator);
  if (!pick) return std::nullopt;
  return pick->token;
}

}  // namespace genrepro
