// The float32 operations of the plain chain on cases whose bits can be told by hand: the order of
// the softmax's sum, the cumsum's double accumulator, the exponential's edges. That they are
// libtorch's bits is tests/unit/engine/plain_chain_vs_torch_test.cpp's (it needs libtorch).
#include "sampling/aten_float.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace genrepro::sampling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(AtenFloat, LaneSumAddsEightAccumulatorsThenFoldsThem) {
  // 2^24 + 1 + 1: one after another, each 1 is lost to rounding (2^24 + 1 is no float). The lanes
  // fold as ((0 + 4) + (2 + 6)) + ((1 + 5) + (3 + 7)): ones in lanes 1 and 3 meet first and survive.
  const float big = 16777216.0f;
  std::vector<float> v = {big, 1, 0, 1, 0, 0, 0, 0};
  EXPECT_EQ(aten::lane_sum(v.data(), v.size()), big + 2);
  float in_order = 0;
  for (float x : v) in_order += x;
  EXPECT_EQ(in_order, big);
  // Ones in lanes 2 and 1 meet big first: ((big + 0) + (1 + 0)) rounds back to big.
  std::vector<float> w = {big, 1, 1, 0, 0, 0, 0, 0};
  EXPECT_EQ(aten::lane_sum(w.data(), w.size()), big);
  // Fewer than 8: one after another.
  std::vector<float> few = {big, 1, 1};
  EXPECT_EQ(aten::lane_sum(few.data(), few.size()), big);
  // The tail past the last whole block joins the first lanes: element 9 is lane 1.
  std::vector<float> tail(11, 0.0f);
  tail[0] = big;
  tail[3] = 1;
  tail[9] = 1;
  EXPECT_EQ(aten::lane_sum(tail.data(), tail.size()), big + 2);
}

TEST(AtenFloat, CascadeSumAddsLikeMagnitudesFirst) {
  // 16 vectors of 8 in 4 partials of 4 vectors each: only lane 0 of the first partial meets 2^24
  // (element 0) one 1 at a time, losing those 3 ones to rounding (2^24 + 1 is no float); the other
  // 124 ones are summed among themselves first and survive. One after another, all 127 are lost.
  std::vector<float> v(128, 1.0f);
  v[0] = 16777216.0f;
  EXPECT_EQ(aten::cascade_sum(v.data(), v.size()), 16777216.0f + 124.0f);
  // Under 8 values: 4 scalar partials, the fifth value joining the first.
  std::vector<float> few = {16777216.0f, 1.0f, 1.0f, 0.0f, 1.0f};  // (2^24 + 1) + 1 + 1 + 0
  EXPECT_EQ(aten::cascade_sum(few.data(), few.size()), 16777216.0f);
  // nansum: NaN counts as 0 in its place.
  std::vector<float> nan = {1.0f, std::nanf(""), 2.0f};
  EXPECT_EQ(aten::cascade_sum(nan.data(), nan.size(), /*ignore_nan=*/true), 3.0f);
}

TEST(AtenFloat, LogEdgesAsSleef) {
  EXPECT_EQ(aten::log(1.0f), 0.0f);
  EXPECT_EQ(aten::log(0.0f), -kInf);
  EXPECT_EQ(aten::log(kInf), kInf);
  EXPECT_TRUE(std::isnan(aten::log(-1.0f)));
  EXPECT_NEAR(aten::log(2.0f), 0.6931472f, 1e-7);
  EXPECT_NEAR(aten::log(1e-40f), -92.10340f, 1e-4);  // a subnormal, scaled by 2^64 first
}

TEST(AtenFloat, CumsumAccumulatesInDouble) {
  // In float the running sum 2^24 + 1 rounds back to 2^24; in double it is kept until the next 1.
  const std::vector<float> v = {16777216.0f, 1.0f, 1.0f};
  EXPECT_EQ(aten::cumsum(v), (std::vector<float>{16777216.0f, 16777216.0f, 16777218.0f}));
}

TEST(AtenFloat, ExpEdgesAsSleef) {
  EXPECT_EQ(aten::exp(0.0f), 1.0f);
  EXPECT_EQ(aten::exp(-kInf), 0.0f);
  EXPECT_EQ(aten::exp(-104.5f), 0.0f);  // Sleef flushes below -104
  EXPECT_EQ(aten::exp(100.5f), kInf);
  EXPECT_EQ(aten::exp(89.0f), kInf);  // e^89 > FLT_MAX
  EXPECT_TRUE(std::isnan(aten::exp(std::nanf(""))));
  EXPECT_NEAR(aten::exp(1.0f), 2.7182817f, 3e-7);
}

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// The row form computes eight lanes at a time where the CPU can: every value, edges included, must
// be the scalar's bits (a NaN stays the NaN it was, a row's tail goes through the scalar).
TEST(AtenFloat, ExpOfARowIsTheScalarsBitsLaneForLane) {
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, -kInf, kInf, std::nanf(""), -std::nanf(""), -103.99f, -104.0f,
                          -104.01f, 99.99f, 100.0f, 100.01f, 88.72f, 88.73f, -87.33f, -87.34f, -100.5f, -95.0f,
                          1e-30f, -1e-30f, std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max()};
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> wide(-120.0f, 110.0f), narrow(-20.0f, 0.0f);
  for (int i = 0; i < 20000; ++i) x.push_back(i % 2 ? wide(gen) : narrow(gen));
  for (float shift : {0.0f, 3.5f, -2.25f, kInf}) {
    std::vector<float> row(x.size());
    aten::exp_shifted(x.data(), shift, row.data(), x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = aten::exp(x[i] - shift);
      ASSERT_EQ(bits_of(row[i]) == bits_of(want) || (std::isnan(row[i]) && std::isnan(want)), true)
          << "x " << x[i] << " shift " << shift << ": row " << row[i] << ", scalar " << want;
    }
  }
}

TEST(AtenFloat, SoftmaxOfMaskedEntriesIsZeroAndOfAllMaskedIsNaN) {
  const std::vector<float> p = aten::softmax({0.0f, -kInf, 0.0f});
  EXPECT_EQ(p, (std::vector<float>{0.5f, 0.0f, 0.5f}));
  EXPECT_TRUE(std::isnan(aten::softmax({-kInf, -kInf})[0]));
}

TEST(AtenFloat, LogSoftmaxIsLogOfSoftmaxToAFewUlps) {
  const std::vector<float> x = {2.0f, -1.0f, 0.5f, 0.0f, 3.25f};
  const std::vector<float> p = aten::softmax(x), lp = aten::log_softmax(x);
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(std::exp(lp[i]), p[i], 1e-6) << i;
}

}  // namespace
}  // namespace genrepro::sampling
