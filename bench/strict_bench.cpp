// The strict forward's speed against libtorch's on the same shapes (gpt2-124m-shape fixture, made on
// first use under the system temp dir):
//   linear/<strict|torch>/K:k/N:n/M:m/threads:t   one linear layer, M rows; counter FLOPS (2 M K N)
//   step/<strict|torch>/B:b/threads:t             one decoding step of B sequences whose caches hold
//                                                 64 tokens; counter tokens_per_s (B per step)
// strict runs the fastest kernel set of this CPU (GENREPRO_STRICT_ISA overrides) on a ThreadTeam of
// t; torch runs OpenBLAS on t threads (ATen on one), as the engine does. Wall-clock rates
// (UseRealTime): the worker threads do the work, not the benchmark thread.
// Run: build/bench/strict_bench [--benchmark_filter=...]; the heavy cases take a minute or two.
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "bench_fixtures.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/torch_runtime.hpp"
#include "evidence/environment.hpp"
#include "model/fixture_model.hpp"
#include "model/model_files.hpp"
#include "strict/kernel_set.hpp"
#include "strict/packed_linear.hpp"
#include "strict/strict_gpt2.hpp"
#include "strict/thread_team.hpp"
#include "util/splitmix64.hpp"

namespace {

using genrepro::bench::fixture_dir;

constexpr int64_t kPast = 64;  // tokens each cache holds before the measured step

std::vector<float> random_floats(size_t n, uint64_t seed) {
  genrepro::SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.next() >> 40) / static_cast<float>(1 << 24) * 0.2f - 0.1f;
  return v;
}

void set_flops(benchmark::State& state, double per_iteration) {
  state.counters["FLOPS"] = benchmark::Counter(per_iteration * static_cast<double>(state.iterations()),
                                               benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
}

void bench_strict_linear(benchmark::State& state, int64_t K, int64_t N, int64_t M, int threads) {
  const auto w = random_floats(static_cast<size_t>(K * N), 1);
  const auto bias = random_floats(static_cast<size_t>(N), 2);
  const auto x = random_floats(static_cast<size_t>(M * K), 3);
  const auto packed = genrepro::strict::PackedLinear::from_in_out(w.data(), bias.data(), K, N);
  const genrepro::strict::KernelSet& kernels = genrepro::strict::choose_kernel_set("");
  genrepro::strict::ThreadTeam team(threads);
  std::vector<float> out(static_cast<size_t>(M * N));
  for (auto _ : state) {
    packed.apply(kernels, x.data(), M, N, out.data(), team);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(genrepro::strict::to_string(kernels.isa));
  set_flops(state, 2.0 * static_cast<double>(M * K * N));
}

void bench_torch_linear(benchmark::State& state, int64_t K, int64_t N, int64_t M, int threads) {
  const auto w = random_floats(static_cast<size_t>(K * N), 1);
  const auto bias = random_floats(static_cast<size_t>(N), 2);
  const auto x = random_floats(static_cast<size_t>(M * K), 3);
  const torch::Tensor tw = torch::from_blob(const_cast<float*>(w.data()), {K, N}, torch::kFloat32);
  const torch::Tensor tb = torch::from_blob(const_cast<float*>(bias.data()), {N}, torch::kFloat32);
  const torch::Tensor tx = torch::from_blob(const_cast<float*>(x.data()), {M, K}, torch::kFloat32);
  torch::NoGradGuard no_grad;
  genrepro::set_blas_threads(threads);
  for (auto _ : state) benchmark::DoNotOptimize(torch::addmm(tb, tx, tw));
  genrepro::set_blas_threads(1);
  set_flops(state, 2.0 * static_cast<double>(M * K * N));
}

std::vector<int64_t> past_ids() {
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < kPast; ++i) ids.push_back((i * 7919 + 13) % 50000);
  return ids;
}

void bench_strict_step(benchmark::State& state, const genrepro::strict::StrictGpt2* model, int64_t batch, int threads) {
  genrepro::strict::ThreadTeam team(threads);
  genrepro::strict::StrictCache prefill = model->make_cache(kPast + 1);
  std::vector<float> logits(static_cast<size_t>(batch * model->logits_size()));
  model->forward({&prefill}, {past_ids()}, logits.data(), team);
  std::vector<genrepro::strict::StrictCache> caches(static_cast<size_t>(batch), prefill);
  std::vector<genrepro::strict::StrictCache*> pointers;
  for (auto& c : caches) pointers.push_back(&c);
  const std::vector<std::vector<int64_t>> ids(static_cast<size_t>(batch), std::vector<int64_t>{262});
  for (auto _ : state) {
    for (auto& c : caches) c.length = kPast;  // the same step every iteration
    model->forward(pointers, ids, logits.data(), team);
    benchmark::DoNotOptimize(logits.data());
  }
  state.SetLabel(model->kernel_isa());
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(batch * state.iterations()), benchmark::Counter::kIsRate);
}

void bench_torch_step(benchmark::State& state, const genrepro::Gpt2Model* model, int64_t batch, int threads) {
  genrepro::set_blas_threads(1);
  genrepro::KvCache prefill = model->make_cache(kPast + 1);
  model->forward_cached(prefill, past_ids());
  std::vector<genrepro::KvCache> caches;
  for (int64_t b = 0; b < batch; ++b) caches.push_back(model->copy_cache(prefill, kPast + 1));
  std::vector<genrepro::KvCache*> pointers;
  for (auto& c : caches) pointers.push_back(&c);
  const std::vector<int64_t> ids(static_cast<size_t>(batch), 262);
  genrepro::set_blas_threads(threads);
  for (auto _ : state) {
    for (auto& c : caches) c.length = kPast;
    benchmark::DoNotOptimize(model->forward_step(pointers, ids));
  }
  genrepro::set_blas_threads(1);
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(batch * state.iterations()), benchmark::Counter::kIsRate);
}

struct Shape {
  int64_t K, N;
};

}  // namespace

int main(int argc, char** argv) {
  genrepro::set_torch_threads(1);
  const std::vector<Shape> shapes = {{768, 2304}, {768, 50257}};
  for (const Shape& s : shapes)
    for (const int64_t M : {1, 60})
      for (const int threads : {1, 2}) {
        const std::string tail = "/K:" + std::to_string(s.K) + "/N:" + std::to_string(s.N) + "/M:" + std::to_string(M) +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(("linear/strict" + tail).c_str(), bench_strict_linear, s.K, s.N, M, threads)
            ->Unit(benchmark::kMicrosecond)->UseRealTime();
        benchmark::RegisterBenchmark(("linear/torch" + tail).c_str(), bench_torch_linear, s.K, s.N, M, threads)
            ->Unit(benchmark::kMicrosecond)->UseRealTime();
      }

  // Models live for the whole run; loading is not what is measured.
  const genrepro::ModelFiles files =
      genrepro::locate_model_dir(fixture_dir(genrepro::FixturePreset::gpt2_124m_shape), genrepro::ModelSource::flag);
  const auto strict_model = std::make_unique<genrepro::strict::StrictGpt2>(genrepro::strict::StrictGpt2::load(files));
  const auto torch_model = std::make_unique<genrepro::Gpt2Model>(genrepro::Gpt2Model::load(files));
  for (const int64_t batch : {1, 60})
    for (const int threads : {1, 2}) {
      const std::string tail = "/B:" + std::to_string(batch) + "/threads:" + std::to_string(threads);
      benchmark::RegisterBenchmark(("step/strict" + tail).c_str(), bench_strict_step, strict_model.get(), batch, threads)
          ->Unit(benchmark::kMillisecond)->UseRealTime();
      benchmark::RegisterBenchmark(("step/torch" + tail).c_str(), bench_torch_step, torch_model.get(), batch, threads)
          ->Unit(benchmark::kMillisecond)->UseRealTime();
    }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
