#pragma once
// rng "portable": the draw torch.multinomial(probs, 1, generator=g) makes on CPU (libtorch 1.13),
// written over std::mt19937, whose output sequence the C++ standard fixes. No libtorch here, so a
// sampled token depends on this code and the C++ library, not on how libtorch was built.
//
// What torch does for one sample (aten/src/ATen/native/Distributions.cpp, multinomial fast path
// "s = argmax(p / q) where q ~ Exp(1)"):
//   q = empty_like(probs).exponential_(1, gen)   // one draw per vocabulary entry, in index order
//   token = argmax(probs / q)
// and for each q (cpu/DistributionTemplates.h exponential_kernel -> DistributionsHelper.h
// exponential_distribution<double> -> TransformationHelper.h):
//   r = (uint64(mt()) << 32) | mt()              // CPUGeneratorImpl::random64: first output high
//   u = (r & (2^53 - 1)) * 2^-53                 // uniform_real<double>: 53 bits, u in [0, 1)
//   q = (float)(-1.0 / lambda * log(1.0 - u))    // double, then cast to the tensor's float32
// probs / q is a float32 division and argmax takes the first maximum (a NaN counts as maximal).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "params/mt19937.hpp"

namespace genrepro {

// How close an exponential race came to another winner (evidence: steps[].draw, rule
// "exponential_race"). The winner has the largest ratio r = p / q; `margin` = ln(r_best /
// r_second) >= 0, in double from the two float32 ratios: scaling the winner's probability down
// (or the runner-up's up) by a factor e^margin swaps them, so it is the smallest relative change
// of the two probabilities that changes the pick. 0 is a tie the index order broke.
struct RaceMargin {
  int64_t runner_up = -1;
  double margin = 0;
};

// The race's two leaders as the ratios come in, in index order: the winner is argmax's (the first
// maximum; the first NaN beats everything, as torch's argmax), the runner-up the best of the rest.
// One implementation for both rngs (torch's generator and std::mt19937), so they rule alike.
class RaceLeaders {
 public:
  void offer(int64_t index, float ratio) {
    if (winner_is_nan_) return;
    if (winner_ < 0 || std::isnan(ratio) || ratio > winner_ratio_) {
      runner_up_ = winner_, runner_up_ratio_ = winner_ratio_;
      winner_ = index, winner_ratio_ = ratio, winner_is_nan_ = std::isnan(ratio);
    } else if (runner_up_ < 0 || ratio > runner_up_ratio_) {
      runner_up_ = index, runner_up_ratio_ = ratio;
    }
  }
  int64_t winner() const { return winner_; }
  // Absent when no other token could have won: no second positive ratio (one token had
  // probability > 0), or a ratio that is NaN or infinite (a draw of exactly 0, p 2^-53 an entry).
  std::optional<RaceMargin> margin() const;

 private:
  int64_t winner_ = -1, runner_up_ = -1;
  float winner_ratio_ = 0, runner_up_ratio_ = 0;
  bool winner_is_nan_ = false;
};

// One draw of a race: the token, and how close it came to another.
struct RacePick {
  int64_t token = -1;
  std::optional<RaceMargin> margin;
};

class PortableMultinomial {
 public:
  // torch's CPU generator seeds its mt19937 with the low 32 bits of the seed (manual_seed(s) and
  // manual_seed(s + 2^32) draw the same numbers); std::mt19937's seeding is the same init_genrand.
  explicit PortableMultinomial(uint64_t seed);

  // One sample from `probs` (n >= 1 float32 probabilities, not necessarily normalised, as
  // torch.multinomial accepts them). Consumes 2 * n outputs of the mt19937 engine, like torch.
  // Throws std::invalid_argument for what torch rejects: a negative, NaN or infinite entry, or
  // all zeros.
  int64_t sample(const float* probs, size_t n) { return race(probs, n).token; }
  // The same draw with its margin (the same engine outputs consumed).
  RacePick race(const float* probs, size_t n);

  // The next Exp(1) draw exactly as torch casts it into a float32 tensor (exposed for tests).
  float next_exponential();

 private:
  uint64_t next_bits();  // CPUGeneratorImpl::random64: two outputs, the first high
  static float exponential_from(uint64_t bits);
  Mt19937 engine_;  // std::mt19937's outputs (params/mt19937.hpp)
};

}  // namespace genrepro
