// The portable race against numbers recorded from PyTorch 1.13 (python3-torch 1.13.1, the same
// library the engine links), so this core test needs no libtorch:
//   g = torch.Generator().manual_seed(42); torch.empty(6).exponential_(1, generator=g)
//   g = torch.Generator().manual_seed(42); [torch.multinomial(p, 1, generator=g) for 20 draws]
// The engine test (tests/unit/engine/portable_rng_vs_torch_test.cpp) compares thousands of draws live.
#include "params/portable_rng.hpp"

#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

TEST(PortableMultinomial, ExponentialDrawsEqualTorchBitForBit) {
  // float.hex() of the values above; exact equality is the point (same bits, same cast).
  const std::vector<float> seed42 = {0x1.ead0ccp-5f, 0x1.0a2468p-4f, 0x1.0e2a62p-3f,
                                     0x1.ba795ep-5f, 0x1.7e6b14p-1f, 0x1.4ba782p-1f};
  PortableMultinomial race42(42);
  for (size_t i = 0; i < seed42.size(); ++i) EXPECT_EQ(race42.next_exponential(), seed42[i]) << "draw " << i;
  const std::vector<float> seed0 = {0x1.c110d6p+1f, 0x1.3afa7ep+0f, 0x1.3ae710p-1f};
  PortableMultinomial race0(0);
  for (size_t i = 0; i < seed0.size(); ++i) EXPECT_EQ(race0.next_exponential(), seed0[i]) << "draw " << i;
}

TEST(PortableMultinomial, SequenceOfSamplesEqualsTorch) {
  const std::vector<float> probs = {0.1f, 0.2f, 0.3f, 0.4f};
  const std::vector<int64_t> torch_picks = {3, 1, 2, 2, 0, 0, 1, 3, 1, 1, 1, 3, 3, 0, 3, 0, 1, 1, 3, 2};
  PortableMultinomial race(42);
  std::vector<int64_t> picks;
  for (size_t i = 0; i < torch_picks.size(); ++i) picks.push_back(race.sample(probs.data(), probs.size()));
  EXPECT_EQ(picks, torch_picks);
}

TEST(PortableMultinomial, SeedUsesLow32BitsLikeTorch) {
  // torch: manual_seed(2**32 + 42) draws what manual_seed(42) draws (recorded: the same 20 picks).
  PortableMultinomial a(42), b((uint64_t{1} << 32) + 42);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(a.next_exponential(), b.next_exponential());
}

TEST(PortableMultinomial, ZeroProbabilityIsNeverPicked) {
  const std::vector<float> probs = {0.f, 1.f, 0.f};
  PortableMultinomial race(7);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(race.sample(probs.data(), probs.size()), 1);
}

TEST(PortableMultinomial, RejectsWhatTorchRejects) {
  PortableMultinomial race(1);
  const std::vector<float> negative = {0.5f, -0.1f};
  const std::vector<float> zeros = {0.f, 0.f};
  EXPECT_THROW(race.sample(negative.data(), negative.size()), std::invalid_argument);
  EXPECT_THROW(race.sample(zeros.data(), zeros.size()), std::invalid_argument);
  EXPECT_THROW(race.sample(nullptr, 0), std::invalid_argument);
}

}  // namespace
}  // namespace genrepro

namespace genrepro {
namespace {

// The race's generator is std::mt19937 output for output, over several twists and seeds (the
// standard fixes the sequence: its 10,000th output for the default seed 5489 is 4123659995).
TEST(Mt19937, EveryOutputIsStdMt19937s) {
  for (uint32_t seed : {0u, 1u, 42u, 5489u, 123456789u, 4294967295u}) {
    Mt19937 ours(seed);
    std::mt19937 standard(seed);
    for (int i = 0; i < 200000; ++i) ASSERT_EQ(ours(), standard()) << "seed " << seed << " output " << i;
  }
  Mt19937 fixed(5489u);
  uint32_t value = 0;
  for (int i = 0; i < 10000; ++i) value = fixed();
  EXPECT_EQ(value, 4123659995u);
}

// A race takes its outputs in blocks (fill); blocks of any size, across twists and mixed with
// single outputs, must be the sequence one output at a time gives.
TEST(Mt19937, FilledBlocksAreTheOutputsOneAtATime) {
  Mt19937 ours(42u);
  std::mt19937 standard(42u);
  std::vector<uint32_t> block;
  size_t compared = 0;
  for (size_t n : {size_t{0}, size_t{1}, size_t{623}, size_t{1}, size_t{624}, size_t{625}, size_t{1024}, size_t{1}, size_t{1300}, size_t{3}}) {
    block.assign(n, 0);
    ours.fill(block.data(), n);
    for (size_t i = 0; i < n; ++i, ++compared) ASSERT_EQ(block[i], standard()) << "a block of " << n << ", output " << i;
    ASSERT_EQ(ours(), standard()) << "the single output after a block of " << n;
    ++compared;
  }
  EXPECT_EQ(compared, 4212u);
}

}  // namespace
}  // namespace genrepro
