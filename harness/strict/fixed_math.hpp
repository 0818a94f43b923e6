#pragma once
// The scalar math of strict numerics, each one fixed sequence of IEEE-754 float32 operations (no
// libm: only + - * /, sqrt and fma, which are correctly rounded everywhere). The kernels
// (strict/kernels.inc) apply the same sequence lane by lane, so a vector of results equals these
// scalars bit for bit on every CPU.
//
//   strict_exp   Cephes' expf: n = round(x / ln 2), r = x - n ln 2 (two fma), e^r by a degree-5
//                polynomial (fma), times 2^(n/2) then 2^(n - n/2) (one rounding for subnormal or
//                overflowing results); x < -104 gives 0, x > 89 gives inf, NaN gives NaN.
//                Within 1 ulp of exp over the float range (measured 0.95; tests/unit/strict/fixed_math_test.cpp).
//   strict_tanh  Cephes' tanhf: |x| < 0.625 an odd polynomial (fma), else 1 - 2 / (strict_exp(2|x|) + 1);
//                the sign copied back last. Within 2 ulp of tanh (measured 1.25).
//   gelu_new     HF's NewGELUActivation: 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * (x * x) * x))),
//                left to right, unfused, with strict_tanh.
//   fixed_sum    element i into partial i % 16 (each partial from +0, in index order), then the
//                tree s[i] += s[i + 8] (i < 8), s[i] += s[i + 4], s[i] += s[i + 2], s[0] + s[1]:
//                an order set by n alone, which a 16-, 8-, 4- or 1-lane machine computes alike.
#include <cstddef>

namespace genrepro::strict {

float strict_exp(float x);
float strict_tanh(float x);
float gelu_new(float x);
float fixed_sum(const float* x, size_t n);

}  // namespace genrepro::strict
