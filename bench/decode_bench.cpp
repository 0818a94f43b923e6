// The decode loop's speed, on the tiny and gpt2-124m-shape fixtures (made on first use under the
// system temp dir):
//   decode/<preset>/<mode>/batch:B   one lock-step decoding step of B runs (reference and tiled),
//                                    counters: useful tokens/s (B per step)
//   prefill/<preset>                 the prompt's forward pass (8 tokens), into a fresh cache
//   sampler_and_record/<preset>/<numerics>
//                                    temperature -> top-p -> softmax -> multinomial -> the step
//                                    record, on one run's logits: what a batch pays per row, with
//                                    libtorch's row math (reference, tiled) or strict's own
//   load_and_hash/<preset>           Gpt2Model::load + sha256 of model.safetensors (the evidence's)
// Wall-clock rates (UseRealTime): the BLAS threads do the work, not the benchmark thread.
// Run: scripts/bench.sh (this, then the grid and generate against the Python loop, with ratios).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "engine/batched_decoder.hpp"
#include "engine/generation_loop.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/numerics_probe.hpp"
#include "engine/run_environment.hpp"
#include "engine/step_evidence.hpp"
#include "evidence/environment.hpp"
#include "bench_fixtures.hpp"
#include "model/fixture_model.hpp"
#include "model/model_files.hpp"
#include "sampling/step_math.hpp"
#include "util/sha256.hpp"
#include "engine/torch_row_math.hpp"

namespace {

namespace fs = std::filesystem;
using genrepro::FixturePreset;

const std::vector<int64_t> kPromptIds = {1169, 7850, 3331, 373, 257, 1310, 13, 383};

using genrepro::bench::fixture_dir;

struct Loaded {
  std::string dir;
  std::unique_ptr<genrepro::Gpt2Model> model;
  genrepro::NumericsProbeResult probe;
};

// One decoding step of `batch` runs whose caches hold the prompt plus 16 tokens.
void bench_decode(benchmark::State& state, const Loaded* loaded, int64_t tile, int blas_threads, int64_t batch) {
  const genrepro::Gpt2Model& model = *loaded->model;
  const genrepro::LinearLayout layout{tile};
  genrepro::set_blas_threads(1);
  genrepro::KvCache prefill = model.make_cache(64);
  model.forward_cached(prefill, kPromptIds, layout);
  std::vector<genrepro::KvCache> caches;
  for (int64_t b = 0; b < batch; ++b) caches.push_back(model.copy_cache(prefill, 64));
  std::vector<genrepro::KvCache*> pointers;
  for (auto& c : caches) pointers.push_back(&c);
  const std::vector<int64_t> ids(static_cast<size_t>(batch), 262);
  genrepro::set_blas_threads(blas_threads);
  for (auto _ : state) {
    for (auto& c : caches) c.length = static_cast<int64_t>(kPromptIds.size());  // same length every step
    benchmark::DoNotOptimize(model.forward_step(pointers, ids, layout));
  }
  genrepro::set_blas_threads(1);
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(batch * state.iterations()), benchmark::Counter::kIsRate);
}

void bench_prefill(benchmark::State& state, const Loaded* loaded) {
  genrepro::set_blas_threads(1);
  for (auto _ : state) {
    genrepro::KvCache cache = loaded->model->make_cache(64);
    benchmark::DoNotOptimize(loaded->model->forward_cached(cache, kPromptIds));
  }
}

void bench_sampler_and_record(benchmark::State& state, const Loaded* loaded, const genrepro::StepMath* math_in) {
  genrepro::set_blas_threads(1);
  genrepro::KvCache cache = loaded->model->make_cache(64);
  const std::vector<float> logits = genrepro::logits_row(loaded->model->forward_cached(cache, kPromptIds), -1);
  genrepro::SamplingParams s;
  s.mode = genrepro::DecodeMode::sample;
  s.temperature = 1.0;
  s.top_p = 0.9;
  s.sampler_order = {genrepro::SamplerStage::temperature, genrepro::SamplerStage::top_p};
  s.seed = 42;
  const genrepro::StepMath& math = *math_in;
  genrepro::RunChain chain(s, kPromptIds, 50256, math.chain());
  const genrepro::TokenText text = [](int64_t id) { return std::to_string(id); };
  int64_t step = 0;
  for (auto _ : state) {
    const genrepro::RunStep chosen = chain.step(logits, step++, /*pick=*/true);
    const genrepro::StepInputs in{logits, chosen.final_probs, chosen.argmax, 1.0, 5};
    benchmark::DoNotOptimize(genrepro::describe_step(in, chosen.token, text, math));
  }
}

void bench_load_and_hash(benchmark::State& state, const Loaded* loaded) {
  const genrepro::ModelFiles files = genrepro::locate_model_dir(loaded->dir, genrepro::ModelSource::flag);
  for (auto _ : state) {
    benchmark::DoNotOptimize(genrepro::Gpt2Model::load(files));
    benchmark::DoNotOptimize(genrepro::sha256_file(files.weights));
  }
  state.counters["bytes"] = static_cast<double>(fs::file_size(files.weights));
}

}  // namespace

int main(int argc, char** argv) {
  bool tiny_only = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--tiny-only") tiny_only = true;
    else rest.push_back(argv[i]);
  }
  genrepro::prepare_runtime_for_runs();  // one intra-op thread; BLAS threads set per benchmark
  const genrepro::BlasInfo blas = genrepro::probe_blas();
  benchmark::AddCustomContext("blas", blas.resolved.value_or(blas.library.value_or("none")) + " (" + blas.vendor +
                                          ", core " + blas.core.value_or("?") + ")");
  std::vector<std::unique_ptr<Loaded>> models;
  for (FixturePreset preset : {FixturePreset::tiny, FixturePreset::gpt2_124m_shape}) {
    if (tiny_only && preset != FixturePreset::tiny) continue;
    auto loaded = std::make_unique<Loaded>();
    loaded->dir = fixture_dir(preset);
    loaded->model = std::make_unique<genrepro::Gpt2Model>(
        genrepro::Gpt2Model::load(genrepro::locate_model_dir(loaded->dir, genrepro::ModelSource::flag)));
    loaded->probe = genrepro::probe_numerics(*loaded->model, genrepro::NumericsProbeLimits{2, 16, 16});
    const std::string p = genrepro::to_string(preset);
    for (const auto& r : loaded->probe.rows)
      benchmark::AddCustomContext("probe/" + p + "/rows_keeping_bits_on_" + std::to_string(r.blas_threads) + "_blas_threads",
                                  std::to_string(r.max_rows));
    benchmark::AddCustomContext("probe/" + p + "/tile", std::to_string(loaded->probe.tile));
    const Loaded* l = loaded.get();
    // reference: 2 BLAS threads when the probe proved they keep a lone row's bits
    const int ref_threads = l->probe.at(2).max_rows >= 1 ? 2 : 1;
    for (int64_t b : {1, 2, 4, 8, 12, 24, 60}) {
      benchmark::RegisterBenchmark(("decode/" + p + "/reference/batch:" + std::to_string(b)).c_str(), bench_decode, l,
                                   int64_t{0}, ref_threads, b)
          ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
      benchmark::RegisterBenchmark(("decode/" + p + "/tiled/batch:" + std::to_string(b)).c_str(), bench_decode, l,
                                   l->probe.tile, 1, b)
          ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(0.5);
    }
    benchmark::RegisterBenchmark(("prefill/" + p).c_str(), bench_prefill, l)->Unit(benchmark::kMillisecond)->UseRealTime();
    for (const auto& [numerics, math] : {std::pair{"reference", &genrepro::torch_step_math()}, std::pair{"strict", &genrepro::strict_step_math()}})
      benchmark::RegisterBenchmark(("sampler_and_record/" + p + "/" + numerics).c_str(), bench_sampler_and_record, l, math)
          ->Unit(benchmark::kMicrosecond)->UseRealTime();
    benchmark::RegisterBenchmark(("load_and_hash/" + p).c_str(), bench_load_and_hash, l)->Unit(benchmark::kMillisecond)->UseRealTime();
    models.push_back(std::move(loaded));
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
