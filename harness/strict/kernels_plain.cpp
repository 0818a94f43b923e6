// The plain kernel set: kernels.inc over one float, in the target's baseline instructions. It is
// the reference the vector sets are tested against (tests/unit/strict/kernels_test.cpp), and what
// runs where no vector set does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <cstring>

#include "strict/kernel_set.hpp"

namespace genrepro::strict::plain_set {

// One lane. min and max return b when a is NaN, as x86's minps / maxps and AArch64's fminnm /
// fmaxnm do, so exp's clamp treats NaN alike on every set.
struct Vec {
  using F = float;
  using I = int32_t;
  using M = bool;
  static constexpr int L = 1;
  static F zero() { return 0.0f; }
  static F load(const float* p) { return *p; }
  static void store(float* p, F v) { *p = v; }
  static F set1(float x) { return x; }
  static F add(F a, F b) { return a + b; }
  static F sub(F a, F b) { return a - b; }
  static F mul(F a, F b) { return a * b; }
  static F div(F a, F b) { return a / b; }
  static F fma(F a, F b, F c) { return __builtin_fmaf(a, b, c); }
  static F min(F a, F b) { return a < b ? a : b; }
  static F max(F a, F b) { return a > b ? a : b; }
  static uint32_t bits(F a) {
    uint32_t u;
    std::memcpy(&u, &a, sizeof u);
    return u;
  }
  static F from_bits(uint32_t u) {
    F a;
    std::memcpy(&a, &u, sizeof a);
    return a;
  }
  static F abs(F a) { return from_bits(bits(a) & 0x7fffffffu); }
  static F copysign(F mag, F sgn) { return from_bits((bits(mag) & 0x7fffffffu) | (bits(sgn) & 0x80000000u)); }
  static M lt(F a, F b) { return a < b; }
  static M isnan(F a) { return a != a; }
  static F select(M m, F a, F b) { return m ? a : b; }
  static I bits_minus(F t, F magic) { return static_cast<I>(bits(t) - bits(magic)); }
  static I shr1(I n) { return n >> 1; }  // arithmetic shift (GCC, Clang), as srai / sshr
  static I isub(I a, I b) { return static_cast<I>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b)); }
  static F pow2(I n) { return from_bits((static_cast<uint32_t>(n) + 127u) << 23); }
};

inline constexpr KernelIsa kIsa = KernelIsa::plain;
inline constexpr int kRowBlock = 1;
constexpr int panels_per_tile(int /*rows*/) { return 1; }

namespace {
#include "strict/kernels.inc"
}  // namespace

}  // namespace genrepro::strict::plain_set

namespace genrepro::strict {

const KernelSet* plain_kernel_set() { return &plain_set::kKernels; }

}  // namespace genrepro::strict
