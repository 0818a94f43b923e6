#include "params/portable_rng.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace genrepro {

namespace {

constexpr int kMantissaBits = 53;  // std::numeric_limits<double>::digits, as uniform_real<double> uses
constexpr uint64_t kMantissaMask = (uint64_t{1} << kMantissaBits) - 1;
constexpr double kTwoToMinus53 = 1.0 / static_cast<double>(uint64_t{1} << kMantissaBits);
constexpr double kLambda = 1.0;  // multinomial draws Exp(1)
// Entries whose engine outputs are made in one go: next_bits' order (high, then low), in blocks.
constexpr size_t kRaceBlock = 512;

}  // namespace

std::optional<RaceMargin> RaceLeaders::margin() const {
  if (winner_ < 0 || runner_up_ < 0 || winner_is_nan_) return std::nullopt;
  if (!std::isfinite(winner_ratio_) || !(runner_up_ratio_ > 0)) return std::nullopt;
  // The quotient of two floats and its log in double: what Python's math.log(r1 / r2) gives on
  // the same float32 ratios (tests/reference/draw_margin.py).
  return RaceMargin{runner_up_, std::log(static_cast<double>(winner_ratio_) / static_cast<double>(runner_up_ratio_))};
}

PortableMultinomial::PortableMultinomial(uint64_t seed) : engine_(static_cast<uint32_t>(seed)) {}

uint64_t PortableMultinomial::next_bits() {
  const uint64_t high = engine_();
  const uint64_t low = engine_();
  return (high << 32) | low;
}

float PortableMultinomial::exponential_from(uint64_t bits) {
  const double u = static_cast<double>(bits & kMantissaMask) * kTwoToMinus53;
  return static_cast<float>(-1.0 / kLambda * std::log(1.0 - u));
}

float PortableMultinomial::next_exponential() { return exponential_from(next_bits()); }

RacePick PortableMultinomial::race(const float* probs, size_t n) {
  if (n == 0) throw std::invalid_argument("multinomial: empty probability vector");
  bool any_positive = false;
  for (size_t i = 0; i < n; ++i) {
    if (!(probs[i] >= 0) || std::isinf(probs[i]))
      throw std::invalid_argument("multinomial: probability " + std::to_string(i) + " is " +
                                  std::to_string(probs[i]) + "; allowed: finite and >= 0");
    any_positive = any_positive || probs[i] > 0;
  }
  if (!any_positive) throw std::invalid_argument("multinomial: all probabilities are 0");

  // torch fills the whole q tensor first, then divides; drawing in the same index order while
  // racing gives the same numbers. Every draw is consumed even after a NaN won (RaceLeaders
  // ignores the rest), so the generator advances 2 x 32 bits per entry whatever happens.
  RaceLeaders leaders;
  std::array<uint32_t, 2 * kRaceBlock> words;
  for (size_t i = 0; i < n; ++i) {
    const size_t in_block = i % kRaceBlock;
    if (in_block == 0) engine_.fill(words.data(), 2 * std::min(kRaceBlock, n - i));
    const uint64_t bits = (uint64_t{words[2 * in_block]} << 32) | words[2 * in_block + 1];
    // p = 0: 0 / q is 0 for every q > 0, so its logarithm is not computed; only q = 0 (u = 0
    // exactly) gives 0 / -0 = NaN. A ratio of 0 can neither beat a winner nor give a margin (a
    // runner-up needs a ratio > 0): it is offered only while there is no winner, as argmax of
    // all-zero ratios takes the first. Top-p leaves most entries at 0: about 4x faster then.
    const auto index = static_cast<int64_t>(i);
    if (probs[i] > 0 || (bits & kMantissaMask) == 0) leaders.offer(index, probs[i] / exponential_from(bits));
    else if (leaders.winner() < 0) leaders.offer(index, 0.0f);
  }
  return RacePick{leaders.winner(), leaders.margin()};
}

}  // namespace genrepro
