#include "engine/runner.hpp"

#include <filesystem>
#include <iostream>

#include "build_info.hpp"
#include "util/errors.hpp"
#include "util/index_pool.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "engine/generation_loop.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "engine/run_environment.hpp"

namespace genrepro {

namespace {

// More worker threads than this is a typo; each holds a model's activations.
constexpr int kMaxRunThreads = 256;

std::string evidence_source_name(const ModelFiles& files, const Gpt2Config& config) {
  if (config.raw.is_object() && config.raw.contains("genrepro_fixture")) return "fixture";
  switch (files.source) {
    case ModelSource::hf_cache: return "hf-cache";
    case ModelSource::env: return "env";
    case ModelSource::fixture: return "fixture";
    case ModelSource::flag: return "hf-dir";
  }
  return "hf-dir";
}

// Runs plan.selected on `threads` workers; results[k] belongs to plan.selected[k].
std::vector<GenerationResult> execute(const RunPlan& plan, const Gpt2Model& model, const Gpt2Tokenizer& tokenizer,
                                      int threads, Progress& progress) {
  std::vector<GenerationResult> results(plan.selected.size());
  const TokenText token_text = [&tokenizer](int64_t id) { return tokenizer.token_text(id); };
  const int64_t eos = model.config().eos_token_id;
  const auto run_one = [&](size_t k) {
    const size_t index = static_cast<size_t>(plan.selected[k]);
    const RunParams& params = plan.runs[index].params;
    // A source per run: the cached one holds this run's keys and values.
    const auto source = params.use_cache ? make_cached_source(model) : make_recompute_source(model);
    results[k] = run_generation(*source, plan.prompt_ids[index], params, eos, token_text);
    progress.run_finished(static_cast<int64_t>(results[k].output_ids.size()));
  };
  try {
    for_each_index(plan.selected.size(), threads, run_one);
  } catch (...) {
    progress.finish();  // end the progress line before the error is printed
    throw;
  }
  progress.finish();
  return results;
}

}  // namespace

ModelInfo describe_model(const ModelFiles& files, const Gpt2Config& config) {
  ModelInfo m;
  m.source = evidence_source_name(files, config);
  m.path = files.dir;
  m.config = config.raw;
  m.eos_token_id = config.eos_token_id;
  m.n_positions = config.n_positions;
  for (const std::string* path : {&files.weights, &files.config, &files.vocab, &files.merges}) {
    const FileDigest d = sha256_file(*path);
    m.files[std::filesystem::path(*path).filename().string()] = FileRecord{d.sha256, d.bytes};
  }
  return m;
}

namespace {

// What every pass over the runs shares: checked, planned, loaded and hashed once.
struct LoadedExperiments {
  Gpt2Tokenizer tokenizer;
  RunPlan plan;
  Gpt2Model model;
  Evidence header;  // everything but the runs
};

LoadedExperiments load_experiments_and_model(const RunnerOptions& o) {
  if (o.threads < 1 || o.threads > kMaxRunThreads)
    throw UsageError("--threads " + std::to_string(o.threads) + ": allowed: a whole number from 1 to " +
                     std::to_string(kMaxRunThreads) + " (runs executed at once, one intra-op thread each)");
  // Cheap checks first: the experiment files need only config.json and the tokenizer.
  const Gpt2Config config = read_gpt2_config(o.model.config);
  Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(o.model.vocab, o.model.merges);
  RunPlan plan = plan_runs(o.experiments, o.shard, config, tokenizer);
  // The weights are checked (and loaded) before anything is said on stderr, so that a broken
  // model.safetensors gives one error line, like every other bad input.
  Gpt2Model model = Gpt2Model::load(o.model);
  if (o.on_planned) o.on_planned(plan);

  prepare_runtime_for_runs();
  Evidence header;
  header.genrepro = {GENREPRO_VERSION, GENREPRO_GIT_COMMIT};
  header.created_utc = utc_timestamp_now();
  header.environment = collect_environment(o.threads);
  header.model = describe_model(o.model, config);
  for (const ExperimentSpec& spec : plan.experiments) header.experiments.push_back({spec.name, spec.path, spec.sha256, spec.spec});
  return LoadedExperiments{std::move(tokenizer), std::move(plan), std::move(model), std::move(header)};
}

// Every selected run of `plan` once, recorded in index order into a copy of the header.
Evidence run_plan(const RunnerOptions& o, const LoadedExperiments& loaded, const RunPlan& plan) {
  const Gpt2Tokenizer& tokenizer = loaded.tokenizer;
  Evidence e = loaded.header;
  Progress progress(static_cast<int64_t>(plan.selected.size()),
                    o.progress != nullptr ? o.progress_style : ProgressStyle::none,
                    o.progress != nullptr ? *o.progress : std::cerr);
  std::vector<GenerationResult> results = execute(plan, loaded.model, tokenizer, o.threads, progress);

  for (size_t k = 0; k < plan.selected.size(); ++k) {
    const size_t index = static_cast<size_t>(plan.selected[k]);
    const ExpandedRun& run = plan.runs[index];
    RunRecord r;
    r.id = run.id;
    r.experiment = run.experiment;
    r.index = static_cast<int64_t>(index);
    r.prompt_index = run.prompt_index;
    r.prompt = run.prompt;
    r.params = run.params;
    r.result = std::move(results[k]);
    std::vector<int64_t> all = r.result.prompt_ids;
    all.insert(all.end(), r.result.output_ids.begin(), r.result.output_ids.end());
    r.text = tokenizer.decode_for_display(all);
    r.continuation = tokenizer.decode_for_display(r.result.output_ids);
    e.runs.push_back(std::move(r));
  }
  return e;
}

RunPlan with_use_cache(RunPlan plan, bool use_cache) {
  for (ExpandedRun& run : plan.runs) run.params.use_cache = use_cache;
  return plan;
}

}  // namespace

Evidence run_experiments(const RunnerOptions& o) {
  const LoadedExperiments loaded = load_experiments_and_model(o);
  return run_plan(o, loaded, loaded.plan);
}

CacheEquivalenceEvidence run_with_and_without_cache(const RunnerOptions& o) {
  const LoadedExperiments loaded = load_experiments_and_model(o);
  return CacheEquivalenceEvidence{run_plan(o, loaded, with_use_cache(loaded.plan, false)),
                                  run_plan(o, loaded, with_use_cache(loaded.plan, true))};
}

}  // namespace genrepro
