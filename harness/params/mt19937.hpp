#pragma once
// MT19937 (Matsumoto and Nishimura, 1998), the generator std::mt19937 and torch's CPU generator
// both run: the same outputs for the same 32-bit seed (init_genrand). Written here because
// libstdc++'s std::mt19937 keeps its state in 64-bit words on LP64 and twists them one at a time,
// which made it a sixth of a sampled run's time on the tiny fixture (a draw takes two outputs per
// vocabulary entry); in 32-bit words the twist is three loops the compiler vectorises, about as fast
// as torch's own. Held to std::mt19937 output for output (tests/unit/params/portable_rng_test.cpp).
#include <array>
#include <cstddef>
#include <cstdint>

namespace genrepro {

class Mt19937 {
 public:
  explicit Mt19937(uint32_t seed) {
    state_[0] = seed;
    for (uint32_t i = 1; i < kN; ++i) state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + i;
  }

  // The next tempered 32-bit output.
  uint32_t operator()() {
    if (index_ == kN) twist();
    return tempered(state_[index_++]);
  }

  // The next n outputs, as n calls would give them: a block of the state is tempered in one loop
  // the compiler vectorises (a race takes two outputs per vocabulary entry).
  void fill(uint32_t* out, size_t n) {
    while (n > 0) {
      if (index_ == kN) twist();
      const size_t take = n < kN - index_ ? n : kN - index_;
      const uint32_t* from = state_.data() + index_;
      for (size_t j = 0; j < take; ++j) out[j] = tempered(from[j]);
      index_ += static_cast<uint32_t>(take);
      out += take;
      n -= take;
    }
  }

 private:
  static constexpr uint32_t kN = 624, kM = 397;
  static uint32_t tempered(uint32_t y) {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }
  static uint32_t mixed(uint32_t upper_of, uint32_t lower_of, uint32_t far) {
    const uint32_t y = (upper_of & 0x80000000u) | (lower_of & 0x7fffffffu);
    return far ^ (y >> 1) ^ ((0u - (y & 1u)) & 0x9908b0dfu);
  }
  void twist() {
    uint32_t i = 0;
    for (; i < kN - kM; ++i) state_[i] = mixed(state_[i], state_[i + 1], state_[i + kM]);
    for (; i < kN - 1; ++i) state_[i] = mixed(state_[i], state_[i + 1], state_[i + kM - kN]);
    state_[kN - 1] = mixed(state_[kN - 1], state_[0], state_[kM - 1]);
    index_ = 0;
  }

  std::array<uint32_t, kN> state_{};
  uint32_t index_ = kN;
};

}  // namespace genrepro
