// The scalar forms are the plain kernel set's arrays of one (strict/kernels.inc holds the code), so
// a scalar and a vector lane cannot drift apart.
#include "strict/fixed_math.hpp"

#include <cstdint>

#include "strict/kernel_set.hpp"

namespace genrepro::strict {

float strict_exp(float x) {
  float y = 0.0f;
  plain_kernel_set()->exp(&x, &y, 1);
  return y;
}

float strict_tanh(float x) {
  float y = 0.0f;
  plain_kernel_set()->tanh(&x, &y, 1);
  return y;
}

float gelu_new(float x) {
  plain_kernel_set()->gelu_new(&x, 1);
  return x;
}

float fixed_sum(const float* x, size_t n) { return plain_kernel_set()->fixed_sum(x, static_cast<int64_t>(n)); }

}  // namespace genrepro::strict
