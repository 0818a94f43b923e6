#pragma once
// torch::multinomial(probs, 1, /*replacement=*/false, generator) for one sample, computed the way
// libtorch 1.13 computes it on CPU (q = Exp(1) draws for every entry from the generator, in index
// order; argmax of probs / q, the first maximum, NaN winning), but drawing the exponential's
// logarithm only where it can matter: an entry of probability 0 has ratio 0 whatever its draw
// (unless the draw is exactly 0, which is then computed as torch does). The generator advances
// by the same 2 x 32 bits per entry, so every later draw of the run is the same too.
// About 4x faster over GPT-2's 50,257 entries once top-p has zeroed most of them.
#include <cstdint>
#include <optional>

#include <ATen/CPUGeneratorImpl.h>

#include "params/portable_rng.hpp"

namespace genrepro {

// std::nullopt when torch::multinomial would refuse `probs` (an entry negative, infinite or NaN,
// or all zero): the caller lets torch say so in its own words. The generator is then untouched.
std::optional<int64_t> multinomial_race(const float* probs, int64_t n, at::CPUGeneratorImpl& generator);

// The same draw with how close it came to another token (RaceMargin: ln of the best ratio over the
// second best). Tracking the runner-up costs one comparison an entry; the draws are the same.
std::optional<RacePick> multinomial_race_pick(const float* probs, int64_t n, at::CPUGeneratorImpl& generator);

}  // namespace genrepro
