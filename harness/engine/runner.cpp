#include "engine/runner.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <stdexcept>
#include <mutex>
#include <optional>

#include "build_info.hpp"
#include "util/build_features.hpp"
#include "util/errors.hpp"
#include "util/index_pool.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"
#include "engine/generation_loop.hpp"
#if GENREPRO_WITH_LIBTORCH
#include "engine/gpt2_model.hpp"
#endif
#include "engine/logits_source.hpp"
#include "engine/batched_decoder.hpp"
#include "engine/numerics_probe.hpp"
#include "engine/numerics_setup.hpp"
#include "engine/run_environment.hpp"
#include "plan/plan_checks.hpp"
#include "strict/strict_gpt2.hpp"
#include "strict/thread_team.hpp"

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

// The forward the numerics mode runs: libtorch's (reference, tiled) or genrepro's own (strict).
struct LoadedModel {
#if GENREPRO_WITH_LIBTORCH
  std::optional<Gpt2Model> torch;
#endif
  std::optional<strict::StrictGpt2> strict;
  std::unique_ptr<LlamaEngine> llama;  // when some run's engine is llama.cpp
  int64_t eos_token_id = 0;
};

// Where each finished run goes: its slot, and the caller's hook, one run at a time.
struct FinishedRuns {
  const RunPlan& plan;
  const TokenText& token_text;
  std::function<void(size_t k, GenerationResult)> store;
  const std::atomic<bool>* stop = nullptr;
  bool stopping() const { return stop != nullptr && stop->load(); }
};

#if GENREPRO_WITH_LIBTORCH
// The article's recompute loop keeps its literal form: one run per worker, on one BLAS thread.
void execute_recompute(const std::vector<size_t>& ks, const Gpt2Model& model, const NumericsSetup& numerics,
                       int threads, FinishedRuns& done) {
  set_blas_threads(1);
  const int64_t eos = model.config().eos_token_id;
  for_each_index(ks.size(), threads, [&](size_t i) {
    if (done.stopping()) return;  // interrupted: start nothing new
    const size_t k = ks[i];
    const size_t index = static_cast<size_t>(done.plan.selected[k]);
    const auto source = make_recompute_source(model, numerics.batch.layout);
    GenerationResult result;
    try {
      result = run_generation(*source, done.plan.prompt_ids[index], done.plan.runs[index].params, eos, done.token_text);
    } catch (const NumericsError& e) {
      throw NumericsError("run " + done.plan.runs[index].id + ": " + e.what());
    }
    done.store(k, std::move(result));
  });
}

// The KV-cache runs in lock-step batches (engine/batched_decoder.hpp), numerics.workers of them at
// once, each taking the next waiting run when one of its runs finishes.
void execute_cached(const std::vector<size_t>& ks, const Gpt2Model& model, const NumericsSetup& numerics,
                    FinishedRuns& done) {
  std::vector<DecodeJob> jobs;
  for (size_t k : ks) {
    const size_t index = static_cast<size_t>(done.plan.selected[k]);
    jobs.push_back(DecodeJob{&done.plan.prompt_ids[index], &done.plan.runs[index].params, {}, done.plan.runs[index].id});
  }
  std::mutex mutex;
  size_t next = 0;
  const auto next_job = [&]() -> std::optional<size_t> {
    std::lock_guard<std::mutex> lock(mutex);
    if (done.stopping()) return std::nullopt;  // interrupted: the batch drains, nobody joins
    return next < jobs.size() ? std::optional<size_t>(next++) : std::nullopt;
  };
  const auto finished = [&](size_t j, GenerationResult result) { done.store(ks[j], std::move(result)); };
  for_each_index(static_cast<size_t>(numerics.workers), numerics.workers,
                 [&](size_t) { decode_batched(model, jobs, numerics.batch, next_job, done.token_text, finished); });
  set_blas_threads(1);
}

#endif  // GENREPRO_WITH_LIBTORCH

// Strict numerics: a recompute run's bits do not depend on the threads its forward uses, so each
// worker takes whole runs on a team of its own thread.
void execute_strict_recompute(const std::vector<size_t>& ks, const strict::StrictGpt2& model, int threads,
                              FinishedRuns& done) {
  const int64_t eos = model.config().eos_token_id;
  for_each_index(ks.size(), threads, [&](size_t i) {
    if (done.stopping()) return;
    const size_t index = static_cast<size_t>(done.plan.selected[ks[i]]);
    strict::ThreadTeam team(1);
    const auto source = make_strict_recompute_source(model, team);
    GenerationResult result;
    try {
      result = run_generation(*source, done.plan.prompt_ids[index], done.plan.runs[index].params, eos, done.token_text);
    } catch (const NumericsError& e) {
      throw NumericsError("run " + done.plan.runs[index].id + ": " + e.what());
    }
    done.store(ks[i], std::move(result));
  });
}

// Strict numerics: the cached runs in one lock-step batch whose forward and sampling share every core.
void execute_strict_cached(const std::vector<size_t>& ks, const strict::StrictGpt2& model, const NumericsSetup& numerics,
                           int threads, FinishedRuns& done) {
  if (ks.empty()) return;
  std::vector<DecodeJob> jobs;
  for (size_t k : ks) {
    const size_t index = static_cast<size_t>(done.plan.selected[k]);
    jobs.push_back(DecodeJob{&done.plan.prompt_ids[index], &done.plan.runs[index].params, {}, done.plan.runs[index].id});
  }
  size_t next = 0;  // one decoder: no other thread hands out jobs
  const auto next_job = [&]() -> std::optional<size_t> {
    if (done.stopping() || next >= jobs.size()) return std::nullopt;
    return next++;
  };
  strict::ThreadTeam team(threads);
  decode_batched(model, jobs, numerics.batch.batch, team, next_job, done.token_text,
                 [&](size_t j, GenerationResult result) { done.store(ks[j], std::move(result)); });
}

// llama.cpp's runs one after another, each on every thread --threads gives llama.cpp.
void execute_llama(const std::vector<size_t>& ks, LlamaEngine& engine, int64_t eos, FinishedRuns& done) {
  for (size_t k : ks) {
    if (done.stopping()) return;
    const size_t index = static_cast<size_t>(done.plan.selected[k]);
    done.store(k, engine.run(done.plan.runs[index].id, done.plan.prompt_ids[index], done.plan.runs[index].params, eos,
                             done.token_text));
  }
}

// Runs the selected runs whose k is in `todo`; each finished one goes to done.store.
void execute(const std::vector<size_t>& todo, const LoadedModel& model, const NumericsSetup& numerics, int threads,
             FinishedRuns& done, Progress& progress) {
  std::vector<size_t> recompute, cached, llama;
  for (size_t k : todo) {
    const RunParams& params = done.plan.runs[static_cast<size_t>(done.plan.selected[k])].params;
    (params.engine == Engine::llama_cpp ? llama : params.use_cache ? cached : recompute).push_back(k);
  }
  try {
    if (!llama.empty()) execute_llama(llama, *model.llama, model.eos_token_id, done);
    if (model.strict) {
      execute_strict_recompute(recompute, *model.strict, threads, done);
      execute_strict_cached(cached, *model.strict, numerics, threads, done);
    } else {
#if GENREPRO_WITH_LIBTORCH
      execute_recompute(recompute, *model.torch, numerics, threads, done);
      execute_cached(cached, *model.torch, numerics, done);
#endif
    }
  } catch (...) {
    set_blas_threads(1);
    progress.finish();  // end the progress line before the error is printed
    throw;
  }
  progress.finish();
}

int64_t cached_run_count(const RunPlan& plan) {
  int64_t n = 0;
  for (int64_t index : plan.selected) n += plan.runs[static_cast<size_t>(index)].params.use_cache ? 1 : 0;
  return n;
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
  LoadedModel model;
  NumericsProbeResult probe;  // reference and tiled only
  Evidence header;  // everything but the runs (and the numerics block, which depends on the pass)
};

LoadedExperiments load_experiments_and_model(const RunnerOptions& o) {
  if (o.threads < 1 || o.threads > kMaxRunThreads)
    throw UsageError("--threads " + std::to_string(o.threads) + ": allowed: a whole number from 1 to " +
                     std::to_string(kMaxRunThreads) + " (runs executed at once, one intra-op thread each)");
  // Cheap checks first: the experiment files need only config.json and the tokenizer.
  const Gpt2Config config = read_gpt2_config(o.model.config);
  Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(o.model.vocab, o.model.merges);
  check_vocabularies(config, o.model.config, tokenizer, o.model.vocab);
  RunPlan plan = plan_runs(o.experiments, o.shard, config, tokenizer);
  check_evidence_size(plan);
  // The weights are checked (and loaded) before anything is said on stderr, so that a broken
  // model.safetensors gives one error line, like every other bad input.
  LoadedModel model;
  if (o.numerics.mode == NumericsMode::strict) {
    strict::ThreadTeam team(std::max(o.threads, 1));
    model.strict.emplace(strict::StrictGpt2::load(o.model, tokenizer.vocab_size(), team));
  } else {
#if GENREPRO_WITH_LIBTORCH
    model.torch.emplace(Gpt2Model::load(o.model, tokenizer.vocab_size()));
#else
    throw UsageError(std::string("--numerics ") + to_string(o.numerics.mode) + ": " + kLibtorchNeeded);
#endif
  }
  model.eos_token_id = config.eos_token_id;
  const bool any_llama = std::any_of(plan.selected.begin(), plan.selected.end(), [&](int64_t i) {
    return plan.runs[static_cast<size_t>(i)].params.engine == Engine::llama_cpp;
  });
  ModelInfo described = describe_model(o.model, config);
  if (any_llama) {
    LlamaRequest llama = o.llama;
    llama.settings.threads = o.threads;
    model.llama = LlamaEngine::load(llama, o.model, described);
    model.llama->check_prompts(plan);
  }
  if (o.on_planned) o.on_planned(plan);

  prepare_runtime_for_runs();
  NumericsProbeResult probe;
#if GENREPRO_WITH_LIBTORCH
  if (model.torch) {
    // Measured before anything runs: a --batch it does not prove is refused now, not after a pass.
    probe = probe_numerics(*model.torch, probe_limits_for(o.numerics, o.threads, cached_run_count(plan)));
    choose_numerics(o.numerics, probe, o.threads, cached_run_count(plan));
  }
#endif
  Evidence header;
  header.genrepro = {GENREPRO_VERSION, GENREPRO_GIT_COMMIT};
  header.created_utc = utc_timestamp_now();
  header.environment = collect_environment(o.threads);
  header.model = std::move(described);
  if (model.llama) header.llama_cpp = model.llama->record();
  for (const ExperimentSpec& spec : plan.experiments) header.experiments.push_back({spec.name, spec.path, spec.sha256, spec.spec});
  return LoadedExperiments{std::move(tokenizer), std::move(plan), std::move(model), probe, std::move(header)};
}

// How one pass executes: the numerics asked for, on `threads` cores.
struct PassSettings {
  NumericsRequest numerics;
  int threads = 1;
};

RunRecord record_of(const RunPlan& plan, size_t index, GenerationResult result, const Gpt2Tokenizer& tokenizer) {
  const ExpandedRun& run = plan.runs[index];
  RunRecord r;
  r.id = run.id;
  r.experiment = run.experiment;
  r.index = static_cast<int64_t>(index);
  r.prompt_index = run.prompt_index;
  r.prompt = run.prompt;
  r.params = run.params;
  r.result = std::move(result);
  std::vector<int64_t> all = r.result.prompt_ids;
  all.insert(all.end(), r.result.output_ids.begin(), r.result.output_ids.end());
  r.text = tokenizer.decode_for_display(all);
  r.continuation = tokenizer.decode_for_display(r.result.output_ids);
  return r;
}

// The runs a resumed checkpoint already holds, placed in their slots (records[k] for
// plan.selected[k]); each must be one of these runs, under the same id.
void place_resumed(const RunPlan& plan, std::vector<RunRecord> resumed, std::vector<std::optional<RunRecord>>& records) {
  std::map<int64_t, size_t> slot;
  for (size_t k = 0; k < plan.selected.size(); ++k) slot[plan.selected[k]] = k;
  for (RunRecord& r : resumed) {
    const auto it = slot.find(r.index);
    if (it == slot.end() || plan.runs[static_cast<size_t>(r.index)].id != r.id)
      throw Error("checkpoint run " + r.id + " (index " + std::to_string(r.index) +
                  ") is not one of this invocation's runs; delete the checkpoint to start the runs over");
    records[it->second] = std::move(r);
  }
}

// Every selected run of `plan` once (minus those o.resume returns), recorded in index order into
// a copy of the header.
Evidence run_plan(const RunnerOptions& o, const LoadedExperiments& loaded, const RunPlan& plan,
                  const PassSettings& pass) {
  const Gpt2Tokenizer& tokenizer = loaded.tokenizer;
  Evidence e = loaded.header;
  const NumericsSetup numerics =
      loaded.model.strict ? choose_strict_numerics(pass.numerics, pass.threads, cached_run_count(plan), loaded.model.strict->kernel_isa())
                          : choose_numerics(pass.numerics, loaded.probe, pass.threads, cached_run_count(plan));
  e.numerics = numerics.record;
  std::vector<std::optional<RunRecord>> records(plan.selected.size());
  if (o.resume) place_resumed(plan, o.resume(e), records);
  std::vector<size_t> todo;
  for (size_t k = 0; k < records.size(); ++k)
    if (!records[k]) todo.push_back(k);

  Progress progress(static_cast<int64_t>(todo.size()), o.progress != nullptr ? o.progress_style : ProgressStyle::none,
                    o.progress != nullptr ? *o.progress : std::cerr);
  const TokenText token_text = [&tokenizer](int64_t id) { return tokenizer.token_text(id); };
  std::mutex mutex;
  FinishedRuns done{plan, token_text, [&](size_t k, GenerationResult result) {
                      const int64_t tokens = static_cast<int64_t>(result.output_ids.size());
                      RunRecord r = record_of(plan, static_cast<size_t>(plan.selected[k]), std::move(result), tokenizer);
                      {
                        std::lock_guard<std::mutex> lock(mutex);
                        if (o.on_run_finished) o.on_run_finished(r);
                        records[k] = std::move(r);
                      }
                      progress.run_finished(tokens);
                    },
                    o.stop};
  execute(todo, loaded.model, numerics, pass.threads, done, progress);

  int64_t finished = 0;
  for (const std::optional<RunRecord>& r : records) finished += r ? 1 : 0;
  if (finished < static_cast<int64_t>(records.size())) {
    if (done.stopping()) throw RunsInterrupted(finished, static_cast<int64_t>(records.size()));
    throw std::logic_error("runner: " + std::to_string(records.size() - static_cast<size_t>(finished)) + " runs never ran");
  }
  for (std::optional<RunRecord>& r : records) e.runs.push_back(std::move(*r));
  return e;
}

RunPlan with_use_cache(RunPlan plan, bool use_cache) {
  for (ExpandedRun& run : plan.runs) run.params.use_cache = use_cache;
  return plan;
}

}  // namespace

Evidence run_experiments(const RunnerOptions& o) {
  const LoadedExperiments loaded = load_experiments_and_model(o);
  return run_plan(o, loaded, loaded.plan, PassSettings{o.numerics, o.threads});
}

CacheEquivalenceEvidence run_with_and_without_cache(const RunnerOptions& options) {
  // Three passes over the same runs: nothing to resume, no checkpoint to feed.
  RunnerOptions o = options;
  o.resume = nullptr;
  o.on_run_finished = nullptr;
  const LoadedExperiments loaded = load_experiments_and_model(o);
  NumericsRequest alone = o.numerics;
  alone.batch = 1;
  alone.allow_inexact_batch = false;
  const RunPlan cached = with_use_cache(loaded.plan, true);
  return CacheEquivalenceEvidence{run_plan(o, loaded, with_use_cache(loaded.plan, false), PassSettings{o.numerics, o.threads}),
                                  run_plan(o, loaded, cached, PassSettings{o.numerics, o.threads}),
                                  run_plan(o, loaded, cached, PassSettings{alone, 1})};
}

}  // namespace genrepro
