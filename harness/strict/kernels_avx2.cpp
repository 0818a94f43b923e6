// The AVX2 + FMA kernel set: kernels.inc over 8 float lanes, compiled for AVX2 and FMA whatever the
// build's baseline (kernel_set.cpp runs it only on a CPU that has both).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "strict/kernel_set.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

namespace genrepro::strict::avx2_set {

struct Vec {
  using F = __m256;
  using I = __m256i;
  using M = __m256;
  static constexpr int L = 8;
  static F zero() { return _mm256_setzero_ps(); }
  static F load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, F v) { _mm256_storeu_ps(p, v); }
  static F set1(float x) { return _mm256_set1_ps(x); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static F sub(F a, F b) { return _mm256_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F div(F a, F b) { return _mm256_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }  // b when a is NaN
  static F max(F a, F b) { return _mm256_max_ps(a, b); }
  static F abs(F a) { return _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff))); }
  static F copysign(F mag, F sgn) {
    const F sign = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
    return _mm256_or_ps(_mm256_andnot_ps(sign, mag), _mm256_and_ps(sign, sgn));
  }
  static M lt(F a, F b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M isnan(F a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static F select(M m, F a, F b) { return _mm256_blendv_ps(b, a, m); }
  static I bits_minus(F t, F magic) { return _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic)); }
  static I shr1(I n) { return _mm256_srai_epi32(n, 1); }
  static I isub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static F pow2(I n) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23)); }
};

inline constexpr KernelIsa kIsa = KernelIsa::avx2;
// 16 ymm registers: 6 rows x 2 vectors (one panel) of accumulators, or up to 3 rows x 2 panels.
inline constexpr int kRowBlock = 6;
constexpr int panels_per_tile(int rows) { return rows <= 3 ? 2 : 1; }

namespace {
#include "strict/kernels.inc"
}  // namespace

}  // namespace genrepro::strict::avx2_set

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace genrepro::strict {
const KernelSet* avx2_kernel_set() { return &avx2_set::kKernels; }
}  // namespace genrepro::strict

#else

namespace genrepro::strict {
const KernelSet* avx2_kernel_set() { return nullptr; }
}  // namespace genrepro::strict

#endif
