// What the consistency layer (evidence/evidence_consistency.hpp) costs on a 10,000-run evidence
// file: the whole read (bounded read, parse, structure, meaning, consistency) against the layer
// alone on the same typed evidence, with the tokenizer at hand (texts checked) and without.
//
// The file is made from golden runs, so every relation holds: 9,500 first predictions
// (golden/fixture/first_prediction_top5.json, T = 1) and 500 50-step sampled runs
// (golden/fixture/eos.json), each a distinct grid point of an experiment whose seed is a list, the
// golden's record copied with its seed and id changed (no relation ties a seed to the tokens).
//   ./build/consistency_bench --benchmark_min_time=1
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>

#include "evidence/evidence.hpp"
#include "evidence/evidence_consistency.hpp"
#include "params/experiment_file.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

constexpr int kFirstPredictions = 9500;
constexpr int kLongRuns = 500;  // 50 steps each: 1,000 of them would pass the reader's 64 MiB

Evidence golden(const std::string& name) {
  return read_evidence(std::string(GENREPRO_SOURCE_DIR) + "/golden/fixture/" + name);
}

// `copies` runs of `model_run` as the grid points of `spec` with its first run entry's seed made
// a list; the runs' records are the golden's, each with its grid point's params and id.
void add_grid(Evidence& out, nlohmann::json spec, const std::string& name, const RunRecord& model_run, int copies) {
  nlohmann::json seeds = nlohmann::json::array();
  for (int s = 0; s < copies; ++s) seeds.push_back(1000 + s);
  spec["name"] = name;
  spec["runs"] = nlohmann::json::array({spec["runs"][0]});
  spec["runs"][0]["seed"] = seeds;
  // The golden run's own temperature (first_prediction_top5 lists three).
  spec["runs"][0]["temperature"] = model_run.params.sampling.temperature;
  const ExperimentSpec expanded = parse_experiment(spec.dump(), name + ".json", RunBudget{kMaxRunsCeiling, 0});
  out.experiments.push_back({name, name + ".json", expanded.sha256, expanded.spec});
  for (const ExpandedRun& planned : expanded.runs) {
    RunRecord r = model_run;
    r.id = planned.id;
    r.experiment = name;
    r.index = static_cast<int64_t>(out.runs.size());
    r.params = planned.params;
    out.runs.push_back(std::move(r));
  }
}

// The 10,000-run file, written once per process into the temp directory.
const std::string& big_evidence() {
  static const std::string path = [] {
    const Evidence first = golden("first_prediction_top5.json");
    const Evidence eos = golden("eos.json");
    Evidence e = eos;
    e.model.path = "/nonexistent/genrepro-bench-model";  // the tokenizer only through $GENREPRO_TOKENIZER_DIR
    e.experiments.clear();
    e.runs.clear();
    add_grid(e, first.experiments[0].spec, "bench_first", first.runs[1], kFirstPredictions);
    add_grid(e, eos.experiments[0].spec, "bench_long", eos.runs[0], kLongRuns);
    const std::string p = (fs::temp_directory_path() / "genrepro-consistency-bench.json").string();
    write_evidence(p, e);
    return p;
  }();
  return path;
}

void use_tokenizer(bool at_hand) {
  ::setenv("GENREPRO_TOKENIZER_DIR", at_hand ? GENREPRO_BENCH_TOKENIZER_DIR : "/nonexistent/genrepro-bench", 1);
}

void BM_ReadEvidence10k(benchmark::State& state) {
  use_tokenizer(state.range(0) != 0);
  const std::string& path = big_evidence();
  for (auto _ : state) benchmark::DoNotOptimize(read_evidence(path));
  state.counters["MiB"] = static_cast<double>(fs::file_size(path)) / (1 << 20);
  state.SetLabel(state.range(0) ? "texts checked" : "texts skipped");
}

void BM_ConsistencyLayer10k(benchmark::State& state) {
  use_tokenizer(state.range(0) != 0);
  const Evidence e = read_evidence(big_evidence());
  for (auto _ : state) check_consistency(e, "bench");
  state.SetLabel(state.range(0) ? "texts checked" : "texts skipped");
}

BENCHMARK(BM_ReadEvidence10k)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConsistencyLayer10k)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace genrepro

BENCHMARK_MAIN();
