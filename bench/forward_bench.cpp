// Tokens per second of greedy generation with the article's recompute loop (use_cache=False)
// and with the KV cache, on the tiny fixture and on a fixture with GPT-2 small's exact shapes.
// Fixtures are made on first use under the system temp dir and reused afterwards.
// tokens_per_s is per CPU second of the benchmark thread (Google Benchmark's default), so that
// other work on a shared machine does not count against the model.
// Run: build/bench/forward_bench [--threads N] [--tiny-only] [google benchmark flags];
// threads default to 1.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "bench_fixtures.hpp"
#include "model/fixture_model.hpp"
#include "model/model_files.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "engine/torch_runtime.hpp"

namespace {

namespace fs = std::filesystem;
using genrepro::FixturePreset;

// "the river bank was a little. The": the article's prompt plus four tokens.
const std::vector<int64_t> kPromptIds = {1169, 7850, 3331, 373, 257, 1310, 13, 383};

using genrepro::bench::fixture_dir;

void greedy(genrepro::LogitsSource& source, int64_t new_tokens) {
  std::vector<int64_t> ids = kPromptIds;
  for (int64_t i = 0; i < new_tokens; ++i) {
    const std::vector<float> row = source.next_logits(ids);
    ids.push_back(static_cast<int64_t>(std::max_element(row.begin(), row.end()) - row.begin()));
  }
  benchmark::DoNotOptimize(ids.data());
}

void bench_greedy(benchmark::State& state, const genrepro::Gpt2Model& model, bool cached, int64_t new_tokens) {
  for (auto _ : state) {
    auto source = cached ? genrepro::make_cached_source(model) : genrepro::make_recompute_source(model);
    greedy(*source, new_tokens);
  }
  state.counters["tokens_per_s"] =
      benchmark::Counter(static_cast<double>(new_tokens * state.iterations()), benchmark::Counter::kIsRate);
}

// New tokens per run: a short continuation, and a longer one where recompute's cost per token
// grows with the sequence and the cache's does not (much).
struct Workload {
  FixturePreset preset;
  std::vector<int64_t> new_tokens;
};
const std::vector<Workload> kWorkloads = {
    {FixturePreset::tiny, {32, 112}},  // the tiny context is 128 tokens
    {FixturePreset::gpt2_124m_shape, {32, 128}},
};

}  // namespace

int main(int argc, char** argv) {
  // Threads are the caller's choice, recorded in the output; 1 unless --threads N is given.
  int threads = 1;
  bool tiny_only = false;  // --tiny-only: skip making and loading the 124M-shape fixture
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (std::string(argv[i]) == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (std::string(argv[i]) == "--tiny-only") {
      tiny_only = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  genrepro::set_torch_threads(threads);
  benchmark::AddCustomContext("torch_intra_op_threads", std::to_string(threads));

  // Models live for the whole run; loading is not what is measured.
  std::vector<std::unique_ptr<genrepro::Gpt2Model>> models;
  for (const Workload& w : kWorkloads) {
    if (tiny_only && w.preset != FixturePreset::tiny) continue;
    models.push_back(std::make_unique<genrepro::Gpt2Model>(genrepro::Gpt2Model::load(
        genrepro::locate_model_dir(fixture_dir(w.preset), genrepro::ModelSource::flag))));
    const genrepro::Gpt2Model& model = *models.back();
    for (const int64_t n : w.new_tokens) {
      for (const bool cached : {false, true}) {
        const std::string name = "greedy/" + std::string(genrepro::to_string(w.preset)) + (cached ? "/kv_cache" : "/recompute") +
                                 "/new_tokens:" + std::to_string(n);
        benchmark::RegisterBenchmark(name.c_str(), bench_greedy, std::cref(model), cached, n)
            ->Unit(benchmark::kMillisecond)
            ->MinTime(1.0);
      }
    }
  }
  int rest_argc = static_cast<int>(rest.size());
  benchmark::Initialize(&rest_argc, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_argc, rest.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
