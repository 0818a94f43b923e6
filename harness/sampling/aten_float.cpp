#include "sampling/aten_float.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace genrepro::sampling::aten {

namespace {

constexpr size_t kLanes = 8;  // floats in one AVX2 register

// 2^q as a float (Sleef's vpow2i_vf_vi2): q in [-126, 127].
float pow2i(int q) {
  const uint32_t bits = static_cast<uint32_t>(q + 0x7f) << 23;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Sleef's vldexp2_vf_vf_vi2: d * 2^(e >> 1) * 2^(e - (e >> 1)), two steps so that every q the
// exponential can reach stays a normal power of two.
float ldexp2(float d, int e) { return d * pow2i(e >> 1) * pow2i(e - (e >> 1)); }

// The 8 lanes of one register folded as vec_reduce_all's AVX2 specialisation does:
// _mm256_permute2f128_ps (lane i with i ^ 4), _mm256_shuffle_ps 0x4E (i ^ 2), 0xB1 (i ^ 1).
float fold_lanes(std::array<float, kLanes> v) {
  for (size_t distance : {size_t{4}, size_t{2}, size_t{1}}) {
    std::array<float, kLanes> next{};
    for (size_t i = 0; i < kLanes; ++i) next[i] = v[i] + v[i ^ distance];
    v = next;
  }
  return v[0];
}

}  // namespace

float exp(float d) {
  // Sleef 3's xexpf (sleefsimdsp.c) with vmla as FMA, as its AVX2 build computes it.
  constexpr float kRecipLn2 = 1.442695040888963407359924681001892137426645954152985934135449406931f;
  constexpr float kLn2Upper = 0.693145751953125f;
  constexpr float kLn2Lower = 1.428606765330187045e-06f;
  if (std::isnan(d)) return d;
  if (d < -104) return 0;  // Sleef's final select; also keeps -infinity out of the integer conversion
  if (100 < d) return std::numeric_limits<float>::infinity();
  // vrint_vi2_vf: _mm256_cvtps_epi32, to nearest with ties to even.
  const int q = static_cast<int>(std::nearbyint(d * kRecipLn2));
  float s = std::fma(static_cast<float>(q), -kLn2Upper, d);
  s = std::fma(static_cast<float>(q), -kLn2Lower, s);
  float u = 0.000198527617612853646278381f;
  u = std::fma(u, s, 0.00139304355252534151077271f);
  u = std::fma(u, s, 0.00833336077630519866943359f);
  u = std::fma(u, s, 0.0416664853692054748535156f);
  u = std::fma(u, s, 0.166666671633720397949219f);
  u = std::fma(u, s, 0.5f);
  u = 1.0f + std::fma(s * s, u, s);
  return ldexp2(u, q);
}

float lane_sum(const float* v, size_t n) {
  if (n == 0) return 0.0f;
  if (n < kLanes) {
    float s = v[0];
    for (size_t i = 1; i < n; ++i) s += v[i];
    return s;
  }
  std::array<float, kLanes> acc{};
  std::copy(v, v + kLanes, acc.begin());
  size_t d = kLanes;
  for (; d + kLanes <= n; d += kLanes)
    for (size_t i = 0; i < kLanes; ++i) acc[i] += v[d + i];
  for (size_t i = 0; d + i < n; ++i) acc[i] += v[d + i];  // Vec::set keeps the tail's lanes only
  return fold_lanes(acc);
}

void softmax(const float* x, float* out, size_t n) {
  if (n == 0) return;
  float max = x[0];
  for (size_t i = 1; i < n; ++i) max = std::max(max, x[i]);  // exact in any order (NaN aside)
  for (size_t i = 0; i < n; ++i) out[i] = exp(x[i] - max);
  const float inverse = 1.0f / lane_sum(out, n);
  for (size_t i = 0; i < n; ++i) out[i] *= inverse;
}

std::vector<float> softmax(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  softmax(x.data(), out.data(), x.size());
  return out;
}

std::vector<float> cumsum(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  double total = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    total += x[i];
    out[i] = static_cast<float>(total);
  }
  return out;
}

std::vector<float> log_softmax(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  if (x.empty()) return out;
  float max = x[0];
  for (float v : x) max = std::max(max, v);
  for (size_t i = 0; i < x.size(); ++i) out[i] = exp(x[i] - max);
  const float log_sum = std::log(lane_sum(out.data(), out.size()));  // torch: Sleef's logf, to 1 ulp
  for (size_t i = 0; i < x.size(); ++i) out[i] = (x[i] - max) - log_sum;
  return out;
}

float ordered_sum(const float* v, size_t n) {
  float s = 0.0f;
  for (size_t i = 0; i < n; ++i) s += v[i];
  return s;
}

}  // namespace genrepro::sampling::aten
