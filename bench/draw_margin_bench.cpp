// The step's draw record: what knowing how close a sampled step's draw came to another token costs.
//   race/before/<kept>        the race loop without the draw record (winner only), copied here
//   race/portable/<kept>      PortableMultinomial::race with the runner-up and margin: what every
//                             sampled step of the chain runs (rng torch and portable alike)
//   torch/multinomial/<kept>  torch::multinomial(probs, 1): torch's own draw, for scale
//   torch/clone_race/<kept>   a generator clone + exponential_ + divide + topk(2): the margin computed
//                             beside torch's draw, the design the race's own record made unnecessary
// over GPT-2's 50,257 entries, <kept> of them positive (50,257: T = 1 without a filter; 200: a
// nucleus as top-p leaves). Compare with decode_bench's decode/*/batch:1 (one forward step).
// Run: build/bench/draw_margin_bench --benchmark_repetitions=5
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "params/portable_rng.hpp"
#include "util/splitmix64.hpp"

namespace {

constexpr int64_t kVocab = 50257;

// softmax of fixed logit-like values (a splitmix64 stream), with all but the `kept` best masked.
torch::Tensor distribution(int64_t kept) {
  std::vector<float> row(static_cast<size_t>(kVocab));
  genrepro::SplitMix64 s(0x9E3779B97F4A7C15ULL);
  for (float& v : row) {
    const uint64_t z = s.next();
    v = static_cast<float>(z >> 40) / static_cast<float>(1 << 24) * 8.0f;
  }
  torch::Tensor logits = torch::from_blob(row.data(), {kVocab}, torch::kFloat32).clone();
  if (kept < kVocab) {
    const auto kth = std::get<0>(torch::topk(logits, kept)).index({kept - 1});
    logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
  }
  return torch::softmax(logits, 0).contiguous();
}

// PortableMultinomial::race without the draw record: the winner alone, nothing else tracked.
int64_t race_before(const float* probs, int64_t n, at::CPUGeneratorImpl& generator) {
  constexpr uint64_t kMask = (uint64_t{1} << 53) - 1;
  constexpr double kScale = 1.0 / static_cast<double>(uint64_t{1} << 53);
  int64_t best = -1;
  float best_ratio = 0;
  bool best_is_nan = false;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t bits = generator.random64();
    const bool needs_draw = probs[i] > 0 || (bits & kMask) == 0;
    const float ratio =
        needs_draw ? probs[i] / static_cast<float>(-std::log(1.0 - static_cast<double>(bits & kMask) * kScale)) : 0.0f;
    if (best_is_nan) continue;
    if (best < 0 || std::isnan(ratio) || ratio > best_ratio) {
      best = i;
      best_ratio = ratio;
      best_is_nan = std::isnan(ratio);
    }
  }
  return best;
}

void BM_race_before(benchmark::State& state) {
  const torch::Tensor p = distribution(state.range(0));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(42);
  auto* g = gen.get<at::CPUGeneratorImpl>();
  for (auto _ : state) benchmark::DoNotOptimize(race_before(p.data_ptr<float>(), kVocab, *g));
}

void BM_portable(benchmark::State& state) {
  const torch::Tensor p = distribution(state.range(0));
  genrepro::PortableMultinomial race(42);
  for (auto _ : state) benchmark::DoNotOptimize(race.race(p.data_ptr<float>(), static_cast<size_t>(kVocab)));
}

void BM_torch_multinomial(benchmark::State& state) {
  const torch::Tensor p = distribution(state.range(0));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(42);
  for (auto _ : state) benchmark::DoNotOptimize(torch::multinomial(p, 1, false, gen).item<int64_t>());
}

void BM_torch_clone_race(benchmark::State& state) {
  const torch::Tensor p = distribution(state.range(0));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(42);
  for (auto _ : state) {
    at::Generator clone = gen.clone();
    const torch::Tensor q = torch::empty_like(p).exponential_(1, clone);
    benchmark::DoNotOptimize(std::get<1>(torch::topk(p / q, 2)).data_ptr<int64_t>());
  }
}

}  // namespace

BENCHMARK(BM_race_before)->Name("race/before")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_portable)->Name("race/portable")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_torch_multinomial)->Name("torch/multinomial")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_torch_clone_race)->Name("torch/clone_race")->Arg(kVocab)->Arg(200);
BENCHMARK_MAIN();
