#include "sampling/aten_float.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define GENREPRO_EXP_AVX2 1
#endif

// std::fma and std::nearbyint are exactly rounded by IEEE-754, so their result does not depend on
// who computes them; but for the x86-64 baseline this file is built for, they are calls into libm
// (half the time of a sampled step on a 50,257-id row, measured). A clone for CPUs with FMA does
// them in instructions: the same bits, chosen at load (strict.digest holds both to one digest).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define GENREPRO_FMA_CLONE __attribute__((target_clones("fma", "default")))
#else
#define GENREPRO_FMA_CLONE
#endif

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

// Sleef's double-float value (its vfloat2): hi + lo, lo carrying the bits hi cannot.
struct Float2 {
  float x, y;
};

// Sleef's df.h operations as its FMA builds define them.
Float2 df_add2(float x, float y) {  // dfadd2_vf2_vf_vf
  const float s = x + y;
  const float v = s - x;
  return {s, (x - (s - v)) + (y - v)};
}
Float2 df_add(Float2 x, Float2 y) {  // dfadd_vf2_vf2_vf2 (|x| >= |y|)
  const float s = x.x + y.x;
  return {s, (((x.x - s) + y.x) + x.y) + y.y};
}
Float2 df_add(Float2 x, float y) {  // dfadd_vf2_vf2_vf
  const float s = x.x + y;
  return {s, ((x.x - s) + y) + x.y};
}
Float2 df_mul(Float2 x, float y) {  // dfmul_vf2_vf2_vf
  const float s = x.x * y;
  return {s, std::fma(x.y, y, std::fma(x.x, y, -s))};
}
Float2 df_scale(Float2 d, float s) { return {d.x * s, d.y * s}; }  // dfscale_vf2_vf2_vf
Float2 df_div(Float2 n, Float2 d) {  // dfdiv_vf2_vf2_vf2
  const float t = 1.0f / d.x;
  const float s = n.x * t;
  const float u = std::fma(t, n.x, -s);
  const float v = std::fma(-d.y, t, std::fma(-d.x, t, 1.0f));
  return {s, std::fma(s, v, std::fma(n.y, t, u))};
}

int float_bits_of(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

float from_bits(int32_t i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}

// utils::CeilLog2: ceil(log2(x)), and 1 for x <= 2.
int64_t ceil_log2(uint64_t x) {
  if (x <= 2) return 1;
  int64_t bits = 0;
  for (uint64_t v = x - 1; v != 0; v >>= 1) ++bits;
  return bits;
}

// multi_row_sum: `nrows` interleaved running sums of `size` rows, each row `nrows` values of
// `width` floats (width 8: a vector; 1: a scalar), in 4 levels so that only sums of similar size
// meet. Returns the nrows sums, each `width` floats.
std::vector<std::array<float, kLanes>> multi_row_sum(const std::function<float(size_t)>& load, size_t size, size_t width) {
  constexpr size_t kRows = 4;
  constexpr int64_t kLevels = 4;
  const int64_t level_power = std::max<int64_t>(4, ceil_log2(size) / kLevels);
  const uint64_t level_step = uint64_t{1} << level_power;
  const uint64_t level_mask = level_step - 1;
  std::vector<std::vector<std::array<float, kLanes>>> acc(kLevels, std::vector<std::array<float, kLanes>>(kRows, std::array<float, kLanes>{}));
  const auto add_row = [&](uint64_t i) {
    for (size_t k = 0; k < kRows; ++k)
      for (size_t l = 0; l < width; ++l) acc[0][k][l] += load((i * kRows + k) * width + l);
  };
  uint64_t i = 0;
  while (i + level_step <= size) {
    for (uint64_t j = 0; j < level_step; ++j, ++i) add_row(i);
    for (int64_t j = 1; j < kLevels; ++j) {
      for (size_t k = 0; k < kRows; ++k)
        for (size_t l = 0; l < width; ++l) {
          acc[j][k][l] += acc[j - 1][k][l];
          acc[j - 1][k][l] = 0.0f;
        }
      if ((i & (level_mask << (j * level_power))) != 0) break;
    }
  }
  for (; i < size; ++i) add_row(i);
  for (int64_t j = 1; j < kLevels; ++j)
    for (size_t k = 0; k < kRows; ++k)
      for (size_t l = 0; l < width; ++l) acc[0][k][l] += acc[j][k][l];
  return acc[0];
}

// row_sum: the row as (-1, 4) units of `width` floats; the units past the last whole 4 join the
// first partial, then the partials fold into it.
std::array<float, kLanes> row_sum(const std::function<float(size_t)>& load, size_t units, size_t width) {
  constexpr size_t kIlp = 4;
  const size_t size_ilp = units / kIlp;
  std::vector<std::array<float, kLanes>> partial = multi_row_sum(load, size_ilp, width);
  for (size_t u = size_ilp * kIlp; u < units; ++u)
    for (size_t l = 0; l < width; ++l) partial[0][l] += load(u * width + l);
  for (size_t k = 1; k < kIlp; ++k)
    for (size_t l = 0; l < width; ++l) partial[0][l] += partial[k][l];
  return partial[0];
}

}  // namespace

GENREPRO_FMA_CLONE float exp(float d) {
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

namespace {

#ifdef GENREPRO_EXP_AVX2
// exp(x[i] - shift) eight at a time: exp's operations above, lane for lane, in AVX2 and FMA
// instructions (each exactly rounded as the scalar's, so the bits are the scalar's; checked
// against torch.exp by the engine tests and by strict.digest). Out-of-range and NaN lanes are
// computed and then replaced, as the scalar's early returns give them.
__attribute__((target("avx2,fma"))) void exp_shifted_avx2(const float* x, float shift, float* out, size_t n) {
  const __m256 recip_ln2 = _mm256_set1_ps(1.442695040888963407359924681001892137426645954152985934135449406931f);
  const __m256 minus_ln2_upper = _mm256_set1_ps(-0.693145751953125f);
  const __m256 minus_ln2_lower = _mm256_set1_ps(-1.428606765330187045e-06f);
  const __m256 low = _mm256_set1_ps(-104.0f), high = _mm256_set1_ps(100.0f);
  const __m256 infinity = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  const __m256i bias = _mm256_set1_epi32(0x7f);
  const __m256 shift_v = _mm256_set1_ps(shift);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), shift_v);
    const __m256 rounded = _mm256_round_ps(_mm256_mul_ps(d, recip_ln2), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256i q = _mm256_cvtps_epi32(rounded);
    const __m256 qf = _mm256_cvtepi32_ps(q);
    __m256 s = _mm256_fmadd_ps(qf, minus_ln2_upper, d);
    s = _mm256_fmadd_ps(qf, minus_ln2_lower, s);
    __m256 u = _mm256_set1_ps(0.000198527617612853646278381f);
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.00139304355252534151077271f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.00833336077630519866943359f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.0416664853692054748535156f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.166666671633720397949219f));
    u = _mm256_fmadd_ps(u, s, _mm256_set1_ps(0.5f));
    u = _mm256_add_ps(_mm256_set1_ps(1.0f), _mm256_fmadd_ps(_mm256_mul_ps(s, s), u, s));
    const __m256i half = _mm256_srai_epi32(q, 1);  // ldexp2: 2^(q >> 1), then 2^(q - (q >> 1))
    const __m256 p1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
    const __m256 p2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_sub_epi32(q, half), bias), 23));
    __m256 r = _mm256_mul_ps(_mm256_mul_ps(u, p1), p2);
    r = _mm256_blendv_ps(r, _mm256_setzero_ps(), _mm256_cmp_ps(d, low, _CMP_LT_OQ));
    r = _mm256_blendv_ps(r, infinity, _mm256_cmp_ps(high, d, _CMP_LT_OQ));
    r = _mm256_blendv_ps(r, d, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));
    _mm256_storeu_ps(out + i, r);
  }
  for (; i < n; ++i) out[i] = exp(x[i] - shift);
}
#endif

}  // namespace

void exp_shifted(const float* x, float shift, float* out, size_t n) {
#ifdef GENREPRO_EXP_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return exp_shifted_avx2(x, shift, out, n);
#endif
  for (size_t i = 0; i < n; ++i) out[i] = exp(x[i] - shift);
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

GENREPRO_FMA_CLONE void softmax(const float* x, float* out, size_t n) {
  if (n == 0) return;
  float max = x[0];
  for (size_t i = 1; i < n; ++i) max = std::max(max, x[i]);  // exact in any order (NaN aside)
  exp_shifted(x, max, out, n);
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

GENREPRO_FMA_CLONE float log(float d) {
  // Sleef 3's xlogf_u1 (sleefsimdsp.c) as its AVX2 build computes it.
  constexpr float kFltMin = std::numeric_limits<float>::min();
  constexpr float kTwoTo64 = 18446744073709551616.0f;
  const bool tiny = d < kFltMin;
  const float scaled = tiny ? d * kTwoTo64 : d;
  // vilogb2k_vi2_vf: the exponent field of scaled * (1 / 0.75), unbiased.
  int32_t e = ((float_bits_of(scaled * (1.0f / 0.75f)) >> 23) & 0xff) - 0x7f;
  // vldexp3_vf_vf_vi2: -e added to the exponent field directly.
  const float m = from_bits(static_cast<int32_t>(static_cast<uint32_t>(float_bits_of(scaled)) + (static_cast<uint32_t>(-e) << 23)));
  if (tiny) e -= 64;
  Float2 s = df_mul(Float2{0.69314718246459960938f, -1.904654323148236017e-09f}, static_cast<float>(e));
  const Float2 x = df_div(df_add2(-1.0f, m), df_add2(1.0f, m));
  const float x2 = x.x * x.x;
  float t = 0.3027294874f;
  t = std::fma(t, x2, 0.3996108174f);
  t = std::fma(t, x2, 0.6666694880f);
  s = df_add(s, df_scale(x, 2.0f));
  s = df_add(s, (x2 * x.x) * t);
  float r = s.x + s.y;
  if (std::isinf(scaled) && scaled > 0) r = std::numeric_limits<float>::infinity();
  if (scaled < 0 || std::isnan(scaled)) r = std::numeric_limits<float>::quiet_NaN();
  if (scaled == 0) r = -std::numeric_limits<float>::infinity();
  return r;
}

GENREPRO_FMA_CLONE std::vector<float> log_softmax(const std::vector<float>& x) {
  std::vector<float> out(x.size());
  if (x.empty()) return out;
  float max = x[0];
  for (float v : x) max = std::max(max, v);
  exp_shifted(x.data(), max, out.data(), x.size());
  const float log_sum = aten::log(lane_sum(out.data(), out.size()));
  for (size_t i = 0; i < x.size(); ++i) out[i] = (x[i] - max) - log_sum;
  return out;
}

float cascade_sum(const float* v, size_t n, bool ignore_nan) {
  const std::function<float(size_t)> load = [v, ignore_nan](size_t i) { return ignore_nan && std::isnan(v[i]) ? 0.0f : v[i]; };
  if (n < kLanes) return row_sum(load, n, 1)[0];  // scalar_inner_sum
  // vectorized_inner_sum: the whole vectors in a cascade, then the rest one by one onto 0.
  const size_t vectors = n / kLanes;
  const std::array<float, kLanes> lanes = row_sum(load, vectors, kLanes);
  float total = 0.0f;
  for (size_t i = vectors * kLanes; i < n; ++i) total += load(i);
  for (float lane : lanes) total += lane;
  return total;
}

}  // namespace genrepro::sampling::aten
