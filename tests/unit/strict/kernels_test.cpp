// Every kernel set this CPU runs (plain, AVX2, AVX-512; NEON on AArch64) against the plain set, bit
// for bit, on ragged shapes, and the linear layer against the order written out here by hand: a
// vector set may only compute more outputs at once, never other operations.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "strict/kernel_set.hpp"
#include "strict/packed_linear.hpp"
#include "strict/thread_team.hpp"
#include "util/errors.hpp"
#include "util/splitmix64.hpp"

namespace genrepro::strict {
namespace {

std::vector<float> random_floats(size_t n, uint64_t seed, float scale = 1.0f) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = scale * (static_cast<float>(rng.next() >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
  return v;
}

uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

// Fails at the first element whose bits differ, naming it and both values.
::testing::AssertionResult same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (bits_of(got[i]) != bits_of(want[i]))
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs " << want[i];
  return ::testing::AssertionSuccess();
}

const KernelSet& plain() { return choose_kernel_set("plain"); }

// The linear order of strict_gpt2.hpp, written out: an fma chain over k from 0, then + bias.
std::vector<float> linear_by_hand(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>* bias,
                                  int64_t M, int64_t K, int64_t N) {
  std::vector<float> out(static_cast<size_t>(M * N));
  for (int64_t r = 0; r < M; ++r)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(x[r * K + k], w[k * N + j], acc);
      out[r * N + j] = bias != nullptr ? acc + (*bias)[j] : acc;
    }
  return out;
}

TEST(StrictKernels, PlainIsAlwaysThereAndListedFirst) {
  const auto sets = supported_kernel_sets();
  ASSERT_FALSE(sets.empty());
  EXPECT_EQ(sets.front()->isa, KernelIsa::plain);
  EXPECT_EQ(&choose_kernel_set(""), sets.back());
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(sets.back()->isa, KernelIsa::avx512);
  }
#endif
  std::string names;
  for (const KernelSet* s : sets) names += std::string(" ") + to_string(s->isa);
  std::printf("kernel sets on this CPU:%s\n", names.c_str());
}

TEST(StrictKernels, UnknownOrUnrunnableSetIsAUsageError) {
  try {
    choose_kernel_set("sse9");
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("GENREPRO_STRICT_ISA=sse9 is not a kernel set; this process runs: plain"),
              std::string::npos)
        << e.what();
  }
#if defined(__x86_64__)
  EXPECT_THROW(choose_kernel_set("neon"), UsageError);
#endif
}

// M, K, N ragged around every tile size (12 x 2 panels, 6 x 1, 1 x 4 ...) and panel width 16.
TEST(StrictKernels, LinearEverySetEqualsTheOrderWrittenOut) {
  ThreadTeam team(1);
  for (const int64_t K : {5, 64, 768}) {
    for (const int64_t N : {1, 17, 48, 2304}) {
      const auto w = random_floats(static_cast<size_t>(K * N), 10 + K * 7 + N);
      const auto bias = random_floats(static_cast<size_t>(N), 20 + N);
      const PackedLinear with_bias = PackedLinear::from_in_out(w.data(), bias.data(), K, N);
      const PackedLinear no_bias = PackedLinear::from_in_out(w.data(), nullptr, K, N);
      for (const int64_t M : {1, 3, 7, 60}) {
        if (K * N * M > 768 * 48 * 60) continue;  // K 768 x N 2304 at M = 1 only: the test stays fast
        const auto x = random_floats(static_cast<size_t>(M * K), 30 + M);
        const auto want = linear_by_hand(x, w, &bias, M, K, N);
        const auto want_no_bias = linear_by_hand(x, w, nullptr, M, K, N);
        for (const KernelSet* set : supported_kernel_sets()) {
          std::vector<float> got(static_cast<size_t>(M * N));
          with_bias.apply(*set, x.data(), M, N, got.data(), team);
          EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa) << " M=" << M << " K=" << K << " N=" << N;
          no_bias.apply(*set, x.data(), M, N, got.data(), team);
          EXPECT_TRUE(same_bits(got, want_no_bias)) << to_string(set->isa) << " no bias, M=" << M << " K=" << K << " N=" << N;
        }
      }
    }
  }
}

// The head's packing (wte [N][K] read transposed), its first n_out columns only, and a team of two:
// the same bits as the Conv1D packing of the transposed matrix on one thread.
TEST(StrictKernels, HeadPackingColumnSubsetAndThreadsChangeNoBit) {
  const int64_t K = 40, N = 1000, M = 13, n_out = 997;
  const auto wte = random_floats(static_cast<size_t>(N * K), 7);
  std::vector<float> w(static_cast<size_t>(K * N));
  for (int64_t j = 0; j < N; ++j)
    for (int64_t k = 0; k < K; ++k) w[k * N + j] = wte[j * K + k];
  const PackedLinear head = PackedLinear::from_out_in(wte.data(), N, K);
  EXPECT_EQ(head.weight(3, 501), wte[501 * K + 3]);
  const auto x = random_floats(static_cast<size_t>(M * K), 8);
  const auto full = linear_by_hand(x, w, nullptr, M, K, N);
  std::vector<float> want(static_cast<size_t>(M * n_out));
  for (int64_t r = 0; r < M; ++r) std::copy_n(full.begin() + r * N, n_out, want.begin() + r * n_out);
  ThreadTeam two(2);
  for (const KernelSet* set : supported_kernel_sets()) {
    std::vector<float> got(static_cast<size_t>(M * n_out));
    head.apply(*set, x.data(), M, n_out, got.data(), two);
    EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa);
  }
}

// Every length from 1 to 70 (vector tails of every size) plus a long row, values of every scale,
// with the special values mixed in.
std::vector<float> mixed_values(size_t n, uint64_t seed) {
  auto v = random_floats(n, seed, 30.0f);
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 1e-40f, -1e-40f, 88.7f, -103.5f, 0.6249f, 0.625f, 9.1f};
  for (size_t i = 0; i < n; i += 7) v[i] = specials[(i / 7) % (sizeof specials / sizeof specials[0])];
  return v;
}

TEST(StrictKernels, ElementwiseAndSumsEverySetEqualsPlain) {
  for (const KernelSet* set : supported_kernel_sets()) {
    for (size_t n = 1; n <= 70; ++n) {
      const auto x = mixed_values(n, n);
      std::vector<float> want(n), got(n);
      plain().exp(x.data(), want.data(), static_cast<int64_t>(n));
      set->exp(x.data(), got.data(), static_cast<int64_t>(n));
      EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa) << " exp, n=" << n;
      plain().tanh(x.data(), want.data(), static_cast<int64_t>(n));
      set->tanh(x.data(), got.data(), static_cast<int64_t>(n));
      EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa) << " tanh, n=" << n;
      want = x;
      got = x;
      plain().gelu_new(want.data(), static_cast<int64_t>(n));
      set->gelu_new(got.data(), static_cast<int64_t>(n));
      EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa) << " gelu_new, n=" << n;
      const auto finite = random_floats(n, 100 + n, 1e3f);
      EXPECT_EQ(bits_of(set->fixed_sum(finite.data(), static_cast<int64_t>(n))),
                bits_of(plain().fixed_sum(finite.data(), static_cast<int64_t>(n))))
          << to_string(set->isa) << " fixed_sum, n=" << n;
    }
  }
}

TEST(StrictKernels, LayerNormEverySetEqualsPlain) {
  for (const KernelSet* set : supported_kernel_sets()) {
    for (const int64_t C : {1, 5, 16, 48, 67, 768}) {
      const auto x = random_floats(static_cast<size_t>(C), C, 4.0f);
      const auto weight = random_floats(static_cast<size_t>(C), C + 1);
      const auto bias = random_floats(static_cast<size_t>(C), C + 2);
      std::vector<float> want(static_cast<size_t>(C)), got(static_cast<size_t>(C));
      plain().layer_norm(x.data(), C, weight.data(), bias.data(), 1e-5f, want.data());
      set->layer_norm(x.data(), C, weight.data(), bias.data(), 1e-5f, got.data());
      EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa) << " C=" << C;
    }
  }
}

TEST(StrictKernels, AttentionEverySetEqualsPlain) {
  for (const KernelSet* set : supported_kernel_sets()) {
    for (const int64_t D : {12, 16, 64, 70}) {
      for (const int64_t T : {1, 7, 8, 9, 33, 130}) {
        const auto q = random_floats(static_cast<size_t>(D), D, 3.0f);
        const auto keys = random_floats(static_cast<size_t>(T * D), T + D, 3.0f);
        const auto values = random_floats(static_cast<size_t>(T * D), T * D);
        for (const bool scale : {true, false}) {
          std::vector<float> scores(static_cast<size_t>(T)), want(static_cast<size_t>(D)), got(static_cast<size_t>(D));
          AttendArgs a;
          a.q = q.data();
          a.keys = keys.data();
          a.values = values.data();
          a.T = T;
          a.D = D;
          a.scale = scale;
          a.divisor = std::sqrt(static_cast<float>(D));
          a.scores = scores.data();
          a.out = want.data();
          plain().attend(a);
          a.out = got.data();
          set->attend(a);
          EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa) << " D=" << D << " T=" << T << " scale=" << scale;
        }
      }
    }
  }
}

// The attention's order, written out for one case: scores by fma chains, the softmax's exp and
// fixed_sum, one division per key, then fma chains over t.
TEST(StrictKernels, AttentionEqualsTheOrderWrittenOut) {
  const int64_t D = 20, T = 11;
  const auto q = random_floats(D, 1, 2.0f);
  const auto keys = random_floats(T * D, 2, 2.0f);
  const auto values = random_floats(T * D, 3);
  std::vector<float> s(T);
  for (int64_t t = 0; t < T; ++t) {
    float acc = 0.0f;
    for (int64_t d = 0; d < D; ++d) acc = std::fma(q[d], keys[t * D + d], acc);
    s[t] = acc / std::sqrt(20.0f);
  }
  float m = s[0];
  for (float v : s) m = std::max(m, v);
  std::vector<float> e(T);
  for (int64_t t = 0; t < T; ++t) {
    const float x = s[t] - m;
    plain().exp(&x, &e[t], 1);
  }
  const float sum = plain().fixed_sum(e.data(), T);
  std::vector<float> want(D);
  for (int64_t d = 0; d < D; ++d) {
    float acc = 0.0f;
    for (int64_t t = 0; t < T; ++t) acc = std::fma(e[t] / sum, values[t * D + d], acc);
    want[d] = acc;
  }
  std::vector<float> scores(T), got(D);
  AttendArgs a;
  a.q = q.data();
  a.keys = keys.data();
  a.values = values.data();
  a.T = T;
  a.D = D;
  a.divisor = std::sqrt(20.0f);
  a.scores = scores.data();
  a.out = got.data();
  for (const KernelSet* set : supported_kernel_sets()) {
    set->attend(a);
    EXPECT_TRUE(same_bits(got, want)) << to_string(set->isa);
  }
}

}  // namespace
}  // namespace genrepro::strict
