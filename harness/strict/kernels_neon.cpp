// The AArch64 Advanced SIMD kernel set: kernels.inc over 4 float lanes (NEON is part of every
// AArch64 CPU, so no runtime check). fmla is fused and correctly rounded, as x86's vfmadd.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "strict/kernel_set.hpp"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace genrepro::strict::neon_set {

struct Vec {
  using F = float32x4_t;
  using I = int32x4_t;
  using M = uint32x4_t;
  static constexpr int L = 4;
  static F zero() { return vdupq_n_f32(0.0f); }
  static F load(const float* p) { return vld1q_f32(p); }
  static void store(float* p, F v) { vst1q_f32(p, v); }
  static F set1(float x) { return vdupq_n_f32(x); }
  static F add(F a, F b) { return vaddq_f32(a, b); }
  static F sub(F a, F b) { return vsubq_f32(a, b); }
  static F mul(F a, F b) { return vmulq_f32(a, b); }
  static F div(F a, F b) { return vdivq_f32(a, b); }
  static F fma(F a, F b, F c) { return vfmaq_f32(c, a, b); }
  static F min(F a, F b) { return vminnmq_f32(a, b); }  // the number when one is NaN
  static F max(F a, F b) { return vmaxnmq_f32(a, b); }
  static F abs(F a) { return vabsq_f32(a); }
  static F copysign(F mag, F sgn) { return vbslq_f32(vdupq_n_u32(0x80000000u), sgn, mag); }
  static M lt(F a, F b) { return vcltq_f32(a, b); }
  static M isnan(F a) { return vmvnq_u32(vceqq_f32(a, a)); }
  static F select(M m, F a, F b) { return vbslq_f32(m, a, b); }
  static I bits_minus(F t, F magic) { return vsubq_s32(vreinterpretq_s32_f32(t), vreinterpretq_s32_f32(magic)); }
  static I shr1(I n) { return vshrq_n_s32(n, 1); }
  static I isub(I a, I b) { return vsubq_s32(a, b); }
  static F pow2(I n) { return vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(n, vdupq_n_s32(127)), 23)); }
};

inline constexpr KernelIsa kIsa = KernelIsa::neon;
// 32 q registers: 6 rows x 4 vectors (one panel) of accumulators, or up to 3 rows x 2 panels.
inline constexpr int kRowBlock = 6;
constexpr int panels_per_tile(int rows) { return rows <= 3 ? 2 : 1; }

namespace {
#include "strict/kernels.inc"
}  // namespace

}  // namespace genrepro::strict::neon_set

namespace genrepro::strict {
const KernelSet* neon_kernel_set() { return &neon_set::kKernels; }
}  // namespace genrepro::strict

#else

namespace genrepro::strict {
const KernelSet* neon_kernel_set() { return nullptr; }
}  // namespace genrepro::strict

#endif
