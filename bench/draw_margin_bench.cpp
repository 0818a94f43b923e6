// Issue 22's draw record: what knowing how close a sampled step's draw came to another token costs.
//   race/pick/<kept>          multinomial_race: the pick alone (as before issue 22's draw)
//   race/pick_margin/<kept>   multinomial_race_pick: the same draws, the runner-up and margin too
//   race/portable/<kept>      PortableMultinomial::race (rng portable), with the margin
//   torch/multinomial/<kept>  torch::multinomial(probs, 1): torch's own draw, for scale
//   torch/clone_race/<kept>   a generator clone + exponential_ + divide + topk(2): the margin computed
//                             beside torch's draw, the design the race's own record made unnecessary
// over GPT-2's 50,257 entries, <kept> of them positive (50,257: T = 1 without a filter; 200: a
// nucleus as top-p leaves). Compare with decode_bench's decode/*/batch:1 (one forward step).
// Run: build/bench/draw_margin_bench --benchmark_repetitions=5
#include <cstdint>
#include <limits>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "engine/multinomial_race.hpp"
#include "spec/portable_rng.hpp"

namespace {

constexpr int64_t kVocab = 50257;

// softmax of fixed logit-like values (a splitmix64 stream), with all but the `kept` best masked.
torch::Tensor distribution(int64_t kept) {
  std::vector<float> row(static_cast<size_t>(kVocab));
  uint64_t s = 0x9E3779B97F4A7C15ULL;
  for (float& v : row) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    v = static_cast<float>(z >> 40) / static_cast<float>(1 << 24) * 8.0f;
  }
  torch::Tensor logits = torch::from_blob(row.data(), {kVocab}, torch::kFloat32).clone();
  if (kept < kVocab) {
    const auto kth = std::get<0>(torch::topk(logits, kept)).index({kept - 1});
    logits = logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
  }
  return torch::softmax(logits, 0).contiguous();
}

void BM_race_pick(benchmark::State& state) {
  const torch::Tensor p = distribution(state.range(0));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(42);
  auto* g = gen.get<at::CPUGeneratorImpl>();
  for (auto _ : state) benchmark::DoNotOptimize(genrepro::multinomial_race(p.data_ptr<float>(), kVocab, *g));
}

void BM_race_pick_margin(benchmark::State& state) {
  const torch::Tensor p = distribution(state.range(0));
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(42);
  auto* g = gen.get<at::CPUGeneratorImpl>();
  for (auto _ : state) benchmark::DoNotOptimize(genrepro::multinomial_race_pick(p.data_ptr<float>(), kVocab, *g));
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

BENCHMARK(BM_race_pick)->Name("race/pick")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_race_pick_margin)->Name("race/pick_margin")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_portable)->Name("race/portable")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_torch_multinomial)->Name("torch/multinomial")->Arg(kVocab)->Arg(200);
BENCHMARK(BM_torch_clone_race)->Name("torch/clone_race")->Arg(kVocab)->Arg(200);
BENCHMARK_MAIN();
