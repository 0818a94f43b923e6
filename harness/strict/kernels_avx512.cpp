// The AVX-512 kernel set: kernels.inc over 16 float lanes, compiled for AVX-512F whatever the
// build's baseline (kernel_set.cpp runs it only on a CPU, and an OS, that has it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "strict/kernel_set.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#endif

namespace genrepro::strict::avx512_set {

// Integer and bit operations are written with GCC's vector extensions: GCC 12's intrinsics for them
// (and for min / max) pass _mm512_undefined_* operands that -Wmaybe-uninitialized reports.
typedef int v16si __attribute__((vector_size(64)));
typedef unsigned v16su __attribute__((vector_size(64)));

struct Vec {
  using F = __m512;
  using I = v16si;
  using M = __mmask16;
  static constexpr int L = 16;
  static F zero() { return _mm512_setzero_ps(); }
  static F load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, F v) { _mm512_storeu_ps(p, v); }
  static F set1(float x) { return _mm512_set1_ps(x); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static F sub(F a, F b) { return _mm512_sub_ps(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F div(F a, F b) { return _mm512_div_ps(a, b); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  // a < b ? a : b and a > b ? a : b: b when a is NaN, as the other sets.
  static F min(F a, F b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a); }
  static F max(F a, F b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_GT_OQ), b, a); }
  static F abs(F a) { return (F)((v16si)a & 0x7fffffff); }
  static F copysign(F mag, F sgn) { return (F)(((v16si)mag & 0x7fffffff) | ((v16si)sgn & static_cast<int>(0x80000000u))); }
  static M lt(F a, F b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M isnan(F a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static F select(M m, F a, F b) { return _mm512_mask_blend_ps(m, b, a); }
  static I bits_minus(F t, F magic) { return (v16si)t - (v16si)magic; }
  static I shr1(I n) { return n >> 1; }
  static I isub(I a, I b) { return a - b; }
  static F pow2(I n) { return (F)(((v16su)n + 127u) << 23); }
};

inline constexpr KernelIsa kIsa = KernelIsa::avx512;
// 32 zmm registers: 12 rows x 2 panels of accumulators (24), or up to 6 rows x 4 panels, which
// gives a lone row (a single sequence's step) four independent chains to hide the fma latency.
inline constexpr int kRowBlock = 12;
constexpr int panels_per_tile(int rows) { return rows <= 6 ? 4 : 2; }

namespace {
#include "strict/kernels.inc"
}  // namespace

}  // namespace genrepro::strict::avx512_set

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace genrepro::strict {
const KernelSet* avx512_kernel_set() { return &avx512_set::kKernels; }
}  // namespace genrepro::strict

#else

namespace genrepro::strict {
const KernelSet* avx512_kernel_set() { return nullptr; }
}  // namespace genrepro::strict

#endif
