// What this machine can do at most, measured in the run that quotes it, so a speed figure can be
// stated as a share of the machine and not only as a ratio to another program:
//   peak/fma/threads:t        float32 fused multiply-adds per second on t threads (counter FLOPS,
//                             2 per FMA): 12 independent vector accumulators a thread, the widest
//                             vector set this CPU runs (AVX-512, AVX2 + FMA, NEON, else scalar)
//   bandwidth/read/threads:t  bytes per second read from memory on t threads (counter bytes_per_s):
//                             a 512 MiB array (far beyond any cache here), each thread summing its
//                             share with vector loads
// Run: build/bench/machine_bench [--benchmark_format=json]; bench/kernels_bench.sh reads it.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace {

constexpr int kChains = 12;                // independent accumulators: more than latency x ports on any core here
constexpr int64_t kFmaRounds = 4'000'000;  // per thread per iteration

// Each returns the number of float FMAs it did; the accumulators' sum goes to `sink` so nothing is
// optimised away.
#if defined(__x86_64__)
__attribute__((target("avx512f"))) int64_t fma_avx512(float* sink) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < kFmaRounds; ++r)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  *sink = _mm512_reduce_add_ps(s);
  return kFmaRounds * kChains * 16;
}

__attribute__((target("avx2,fma"))) int64_t fma_avx2(float* sink) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < kFmaRounds; ++r)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  float lanes[8];
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(lanes, s);
  *sink = lanes[0];
  return kFmaRounds * kChains * 8;
}
#elif defined(__aarch64__)
int64_t fma_neon(float* sink) {
  float32x4_t acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = vdupq_n_f32(static_cast<float>(i));
  const float32x4_t a = vdupq_n_f32(0.999999f), b = vdupq_n_f32(1e-7f);
  for (int64_t r = 0; r < kFmaRounds; ++r)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = vfmaq_f32(b, acc[i], a);
  float32x4_t s = acc[0];
  for (int i = 1; i < kChains; ++i) s = vaddq_f32(s, acc[i]);
  *sink = vgetq_lane_f32(s, 0);
  return kFmaRounds * kChains * 4;
}
#endif

int64_t fma_scalar(float* sink) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = static_cast<float>(i);
  for (int64_t r = 0; r < kFmaRounds; ++r)
    for (int i = 0; i < kChains; ++i) acc[i] = __builtin_fmaf(acc[i], 0.999999f, 1e-7f);
  float s = 0;
  for (float v : acc) s += v;
  *sink = s;
  return kFmaRounds * kChains;
}

struct FmaSet {
  const char* name;
  int64_t (*run)(float*);
};

FmaSet widest_fma() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", &fma_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2", &fma_avx2};
#elif defined(__aarch64__)
  return {"neon", &fma_neon};
#endif
  return {"scalar", &fma_scalar};
}

// Runs body(thread) on t threads at once and waits for all.
template <class Body>
void on_threads(int t, Body body) {
  std::vector<std::thread> team;
  for (int i = 1; i < t; ++i) team.emplace_back(body, i);
  body(0);
  for (std::thread& th : team) th.join();
}

void peak_fma(benchmark::State& state, int threads) {
  const FmaSet set = widest_fma();
  std::vector<float> sinks(static_cast<size_t>(threads) * 16);
  int64_t fmas = 0;
  for (auto _ : state) {
    std::vector<int64_t> done(static_cast<size_t>(threads));
    on_threads(threads, [&](int i) { done[i] = set.run(&sinks[static_cast<size_t>(i) * 16]); });
    for (int64_t d : done) fmas += d;
    benchmark::DoNotOptimize(sinks.data());
  }
  state.SetLabel(set.name);
  state.counters["FLOPS"] = benchmark::Counter(2.0 * static_cast<double>(fmas), benchmark::Counter::kIsRate,
                                               benchmark::Counter::OneK::kIs1000);
}

constexpr size_t kBandwidthBytes = size_t{512} << 20;

// The sum of n floats with 4 independent vector sums (the loads, not the adds, set the pace).
#if defined(__x86_64__)
__attribute__((target("avx2"))) float sum_avx2(const float* p, size_t n) {
  __m256 s[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (size_t i = 0; i + 32 <= n; i += 32)
    for (int j = 0; j < 4; ++j) s[j] = _mm256_add_ps(s[j], _mm256_load_ps(p + i + 8 * j));
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(s[0], s[1]), _mm256_add_ps(s[2], s[3])));
  return lanes[0];
}
#endif

float sum_plain(const float* p, size_t n) {
  float s[16] = {};
  for (size_t i = 0; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) s[j] += p[i + j];
  return s[0];
}

void read_bandwidth(benchmark::State& state, int threads) {
  const size_t n = kBandwidthBytes / sizeof(float);
  std::unique_ptr<float[], void (*)(float*)> data(static_cast<float*>(std::aligned_alloc(64, kBandwidthBytes)),
                                                  [](float* p) { std::free(p); });
  // Touched by the threads that read it, so the pages are mapped before the clock starts.
  const size_t share = n / static_cast<size_t>(threads) / 64 * 64;
  on_threads(threads, [&](int i) { std::memset(data.get() + i * share, 0, share * sizeof(float)); });
  float (*sum)(const float*, size_t) = &sum_plain;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) sum = &sum_avx2;
#endif
  std::vector<float> sinks(static_cast<size_t>(threads) * 16);
  for (auto _ : state) {
    on_threads(threads, [&](int i) { sinks[static_cast<size_t>(i) * 16] = sum(data.get() + i * share, share); });
    benchmark::DoNotOptimize(sinks.data());
  }
  state.counters["bytes_per_s"] = benchmark::Counter(static_cast<double>(share * threads * sizeof(float)) *
                                                         static_cast<double>(state.iterations()),
                                                     benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1024);
}

}  // namespace

int main(int argc, char** argv) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<int> counts = {1};
  if (cores > 1) counts.push_back(cores);
  for (const int t : counts) {
    benchmark::RegisterBenchmark(("peak/fma/threads:" + std::to_string(t)).c_str(), peak_fma, t)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
    benchmark::RegisterBenchmark(("bandwidth/read/threads:" + std::to_string(t)).c_str(), read_bandwidth, t)
        ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
