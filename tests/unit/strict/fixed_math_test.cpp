// strict_exp and strict_tanh against double-precision libm over a dense sweep of floats and the
// special values; gelu_new against its formula in double; fixed_sum against its order written out,
// on an input where that order gives another sum than a left-to-right or an adjacent-pairs one.
#include "strict/fixed_math.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "util/splitmix64.hpp"

namespace genrepro::strict {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Error bounds, in units in the last place of the float nearest the exact result (double libm:
// its own error, under 1e-16 relative, is far below a float ulp). Measured over the sweeps below:
// exp 0.95 ulp, tanh 1.25 ulp (its 1 - 2 / (e + 1) form just above 0.625 loses a little to the
// subtraction). The bounds are 1 and 2 ulp: Cephes' own claims for these algorithms in float, which
// a change of polynomial or reduction that loses accuracy breaks.
constexpr double kExpMaxUlp = 1.0;
constexpr double kTanhMaxUlp = 2.0;

uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float from_bits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

// The float ulp at the magnitude of `exact` (subnormal spacing below FLT_MIN).
double ulp_at(double exact) {
  const double a = std::fabs(exact);
  if (a < std::numeric_limits<float>::min()) return std::ldexp(1.0, -149);
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

double ulp_error(float got, double exact) { return std::fabs(static_cast<double>(got) - exact) / ulp_at(exact); }

// Every 4099th float of [lo, hi], both signs where asked: about a million points each.
template <class Check>
void sweep(float lo, float hi, Check check) {
  for (uint32_t u = bits_of(lo); from_bits(u) <= hi; u += 4099) check(from_bits(u));
}

TEST(StrictFixedMath, ExpWithinOneUlpEverywhere) {
  double worst = 0.0;
  float worst_at = 0.0f;
  const auto check = [&](float x) {
    const double exact = std::exp(static_cast<double>(x));
    if (exact > std::numeric_limits<float>::max()) return;  // checked as overflow below
    const double err = ulp_error(strict_exp(x), exact);
    if (err > worst) {
      worst = err;
      worst_at = x;
    }
  };
  sweep(1e-30f, 88.72f, check);
  sweep(1e-30f, 103.9f, [&](float x) { check(-x); });
  EXPECT_LE(worst, kExpMaxUlp) << "at x = " << worst_at;
  std::printf("strict_exp: max error %.3f ulp (at %.9g)\n", worst, worst_at);
}

TEST(StrictFixedMath, ExpSpecialValues) {
  EXPECT_EQ(bits_of(strict_exp(0.0f)), bits_of(1.0f));
  EXPECT_EQ(bits_of(strict_exp(-0.0f)), bits_of(1.0f));
  EXPECT_EQ(strict_exp(kInf), kInf);
  EXPECT_EQ(bits_of(strict_exp(-kInf)), bits_of(0.0f));
  EXPECT_TRUE(std::isnan(strict_exp(kNaN)));
  EXPECT_EQ(strict_exp(88.73f), kInf);  // past log(FLT_MAX) = 88.7228
  EXPECT_EQ(strict_exp(1000.0f), kInf);
  EXPECT_LT(strict_exp(88.72f), kInf);
  EXPECT_EQ(bits_of(strict_exp(-104.0f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(strict_exp(-1000.0f)), bits_of(0.0f));
  // Subnormal results, rounded once.
  EXPECT_EQ(strict_exp(-103.27893f), std::ldexp(1.0f, -149));
  EXPECT_LE(ulp_error(strict_exp(-100.0f), std::exp(-100.0)), kExpMaxUlp);
  EXPECT_EQ(strict_exp(1.0f), 2.71828183f);
}

TEST(StrictFixedMath, TanhWithinTwoUlpEverywhere) {
  double worst = 0.0;
  float worst_at = 0.0f;
  const auto check = [&](float x) {
    const double err = ulp_error(strict_tanh(x), std::tanh(static_cast<double>(x)));
    if (err > worst) {
      worst = err;
      worst_at = x;
    }
  };
  sweep(1e-38f, 20.0f, check);
  sweep(1e-38f, 20.0f, [&](float x) { check(-x); });
  EXPECT_LE(worst, kTanhMaxUlp) << "at x = " << worst_at;
  std::printf("strict_tanh: max error %.3f ulp (at %.9g)\n", worst, worst_at);
}

TEST(StrictFixedMath, TanhSpecialValues) {
  EXPECT_EQ(bits_of(strict_tanh(0.0f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(strict_tanh(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(strict_tanh(kInf), 1.0f);
  EXPECT_EQ(strict_tanh(-kInf), -1.0f);
  EXPECT_EQ(strict_tanh(50.0f), 1.0f);
  EXPECT_EQ(strict_tanh(-50.0f), -1.0f);
  EXPECT_TRUE(std::isnan(strict_tanh(kNaN)));
  EXPECT_EQ(strict_tanh(1e-40f), 1e-40f);  // subnormal: tanh(x) = x
  EXPECT_EQ(strict_tanh(-1e-40f), -1e-40f);
  // Odd on both sides of the branch point.
  for (const float x : {0.3f, 0.6249f, 0.625f, 0.7f, 3.0f}) EXPECT_EQ(strict_tanh(-x), -strict_tanh(x)) << x;
}

// gelu_new against the formula in double. Its float32 operations round about 8 times, and near
// x = -3 the 1 + tanh(...) cancels (tanh about -0.99), so the bound is relative to max(|x|, 1):
// 1e-6, where a wrong constant (0.044715 -> 0.0447) moves results by 2e-5.
TEST(StrictFixedMath, GeluNewFollowsItsFormula) {
  constexpr double kGeluTolerance = 1e-6;
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  double worst = 0.0;
  for (int i = -8000; i <= 8000; ++i) {
    const float x = static_cast<float>(i) / 1000.0f;
    const double xd = x;
    const double exact = 0.5 * xd * (1.0 + std::tanh(k * (xd + 0.044715 * xd * xd * xd)));
    worst = std::max(worst, std::fabs(gelu_new(x) - exact) / std::max(1.0, std::fabs(xd)));
  }
  EXPECT_LE(worst, kGeluTolerance);
  EXPECT_EQ(bits_of(gelu_new(0.0f)), bits_of(0.0f));
  EXPECT_EQ(gelu_new(100.0f), 100.0f);
  EXPECT_EQ(gelu_new(-100.0f), -0.0f);
}

// The order fixed_sum promises, written out independently.
float sixteen_partials_then_tree(const std::vector<float>& x) {
  float s[16] = {};
  for (size_t i = 0; i < x.size(); ++i) s[i % 16] = s[i % 16] + x[i];
  for (int i = 0; i < 8; ++i) s[i] = s[i] + s[i + 8];
  for (int i = 0; i < 4; ++i) s[i] = s[i] + s[i + 4];
  for (int i = 0; i < 2; ++i) s[i] = s[i] + s[i + 2];
  return s[0] + s[1];
}

TEST(StrictFixedMath, FixedSumIsSixteenPartialsThenTheTree) {
  SplitMix64 rng(42);
  for (size_t n = 0; n <= 200; ++n) {
    std::vector<float> x(n);
    for (float& v : x) v = static_cast<float>(static_cast<int64_t>(rng.next() >> 40) - (1 << 23)) * 1e-3f;
    EXPECT_EQ(bits_of(fixed_sum(x.data(), n)), bits_of(sixteen_partials_then_tree(x))) << "n = " << n;
  }
}

TEST(StrictFixedMath, FixedSumOrderIsNeitherLeftToRightNorAdjacentPairs) {
  // 2^24 + 1 rounds back to 2^24 (ties to even); 2^24 + 2 is exact. Partial 1 collects both ones
  // before meeting 2^24, so only the promised order keeps them.
  std::vector<float> x(10, 0.0f);
  x[0] = 16777216.0f;
  x[1] = 1.0f;
  x[9] = 1.0f;
  float left_to_right = 0.0f;
  for (float v : x) left_to_right = left_to_right + v;
  float pairs[16] = {};
  for (size_t i = 0; i < x.size(); ++i) pairs[i] = x[i];
  for (int width = 16; width > 1; width /= 2)
    for (int i = 0; i < width / 2; ++i) pairs[i] = pairs[2 * i] + pairs[2 * i + 1];
  EXPECT_EQ(left_to_right, 16777216.0f);
  EXPECT_EQ(pairs[0], 16777216.0f);
  EXPECT_EQ(fixed_sum(x.data(), x.size()), 16777218.0f);
  // And the first case the order decides: 1 + 2^24 - 2^24 is 0 left to right, 1 here.
  const std::vector<float> y = {1.0f, 16777216.0f, -16777216.0f};
  EXPECT_EQ(fixed_sum(y.data(), y.size()), 1.0f);
  EXPECT_EQ(fixed_sum(nullptr, 0), 0.0f);
}

}  // namespace
}  // namespace genrepro::strict
