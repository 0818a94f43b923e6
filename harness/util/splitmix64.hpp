#pragma once
// Sebastiano Vigna's splitmix64 (Steele, Lea, Flood 2014; the reference constants of his
// splitmix64.c): the whole generator, so a Python script can replay it bit for bit. The fixture
// models' weights, the near-tie fixture's directions and the report's bootstrap all draw from it.
#include <cstdint>

namespace genrepro {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // An index in [0, n): the high 64 bits of next() * n (Lemire's multiply-shift, without its
  // rejection step: the bias is below n / 2^64, far under anything a figure shows).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64); }

 private:
  uint64_t state_;
};

}  // namespace genrepro
