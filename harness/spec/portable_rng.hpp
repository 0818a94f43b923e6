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
#include <cstddef>
#include <cstdint>
#include <random>

namespace genrepro {

class PortableMultinomial {
 public:
  // torch's CPU generator seeds its mt19937 with the low 32 bits of the seed (manual_seed(s) and
  // manual_seed(s + 2^32) draw the same numbers); std::mt19937's seeding is the same init_genrand.
  explicit PortableMultinomial(uint64_t seed);

  // One sample from `probs` (n >= 1 float32 probabilities, not necessarily normalised, as
  // torch.multinomial accepts them). Consumes 2 * n outputs of the mt19937 engine, like torch.
  // Throws std::invalid_argument for what torch rejects: a negative, NaN or infinite entry, or
  // all zeros.
  int64_t sample(const float* probs, size_t n);

  // The next Exp(1) draw exactly as torch casts it into a float32 tensor (exposed for tests).
  float next_exponential();

 private:
  std::mt19937 engine_;
};

}  // namespace genrepro
