// The step's logits digest: what hashing one step's full float32 logits row costs, by algorithm.
//   digest/xxh64/<V>        util/xxh64 (the evidence's logits_digest)
//   digest/sha256/<V>       util/sha256 (OpenSSL's libcrypto, the evidence's file checksums)
//   digest/fnv1a64/<V>      FNV-1a 64, byte by byte: the simplest 64-bit hash, for scale
//   logits_row_digest/<V>   the engine's call on a [V] float32 row
// V = 50,257 (GPT-2: 201,028 bytes) and 1,000. Compare with decode_bench's decode/*/batch:1 (one
// step's forward pass) and sampler_and_record (the rest of a step's record).
// Run: build/bench/logits_digest_bench --benchmark_repetitions=5
#include <cstdint>
#include <vector>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "engine/step_evidence.hpp"
#include "evidence/logits_digest.hpp"
#include "util/sha256.hpp"
#include "util/splitmix64.hpp"
#include "util/xxh64.hpp"

namespace {

// Logits-like values (around -100, as GPT-2's), fixed: a splitmix64 stream, no library RNG.
std::vector<float> logits_row(int64_t vocab) {
  std::vector<float> row(static_cast<size_t>(vocab));
  genrepro::SplitMix64 s(0x9E3779B97F4A7C15ULL);
  for (float& v : row) {
    const uint64_t z = s.next();
    v = -100.0f + static_cast<float>(z >> 40) / static_cast<float>(1 << 24) * 20.0f;
  }
  return row;
}

uint64_t fnv1a64(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  return h;
}

void set_bytes(benchmark::State& state, int64_t vocab) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * vocab * static_cast<int64_t>(sizeof(float)));
}

void BM_xxh64(benchmark::State& state) {
  const auto row = logits_row(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(genrepro::xxh64(row.data(), row.size() * sizeof(float)));
  set_bytes(state, state.range(0));
}

void BM_sha256(benchmark::State& state) {
  const auto row = logits_row(state.range(0));
  for (auto _ : state) {
    genrepro::Sha256 h;
    h.update(row.data(), row.size() * sizeof(float));
    benchmark::DoNotOptimize(h.finish());
  }
  set_bytes(state, state.range(0));
}

void BM_fnv1a64(benchmark::State& state) {
  const auto row = logits_row(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(fnv1a64(row.data(), row.size() * sizeof(float)));
  set_bytes(state, state.range(0));
}

void BM_logits_row_digest(benchmark::State& state) {
  const auto row = logits_row(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(genrepro::logits_row_digest(row));
  set_bytes(state, state.range(0));
}

}  // namespace

BENCHMARK(BM_xxh64)->Name("digest/xxh64")->Arg(50257)->Arg(1000);
BENCHMARK(BM_sha256)->Name("digest/sha256")->Arg(50257)->Arg(1000);
BENCHMARK(BM_fnv1a64)->Name("digest/fnv1a64")->Arg(50257)->Arg(1000);
BENCHMARK(BM_logits_row_digest)->Name("logits_row_digest")->Arg(50257)->Arg(1000);
BENCHMARK_MAIN();
