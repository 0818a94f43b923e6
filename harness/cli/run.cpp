// genrepro run: experiment files in, evidence.json out (docs/experiments.md, docs/evidence-format.md).
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/flag_kinds.hpp"
#include "cli/llama_flags.hpp"
#include "cli/numerics_flags.hpp"
#include "evidence/environment.hpp"
#include "cli/verbs.hpp"
#include "util/errors.hpp"
#include "params/experiment_file.hpp"
#include "util/shard.hpp"

namespace genrepro::cli {

namespace {

struct RunOptions {
  std::vector<std::string> experiments;
  ModelChoice model;
  std::string out = "reports/evidence.json";
  std::optional<int> threads;  // default: the CPUs this process may use (evidence/environment.hpp)
  NumericsFlags numerics;
  std::string shard = "1/1";
  std::optional<int64_t> top_candidates;
  bool check_equivalence = false;
  double prob_tolerance = kDefaultProbTolerance;
  bool json = false;
  int64_t max_runs = static_cast<int64_t>(kDefaultMaxRuns);
  bool resume = false;
  std::optional<std::string> engine;
  LlamaFlags llama;
};

// --engine overrides every experiment's engine; the library and settings are checked here.
void apply_engine_flags(const RunOptions& o, RunRequest& r) {
  if (o.engine) {
    const std::optional<Engine> engine = parse_engine(*o.engine);
    if (!engine) throw UsageError("--engine " + *o.engine + ": allowed: genrepro or llama.cpp (docs/engines.md)");
    for (ExperimentSpec& spec : r.experiments) override_engine(spec, *engine);
  }
  const LlamaChoice llama = llama_choice_from(o.llama);
  r.llama_lib = llama.library;
  r.llama = llama.settings;
}

// Everything that needs no model is checked here, before the engine (and libtorch) loads:
// --out, the shard, every experiment file and --top-candidates (so their errors come before any
// model is located or made, and stay the only line on stderr). The request carries the
// experiments with --top-candidates already applied.
RunRequest run_request_from(const RunOptions& o) {
  // Found out now, not after the last run: a directory can never be replaced by the evidence.
  std::error_code ec;
  if (std::filesystem::is_directory(o.out, ec))
    throw UsageError("--out " + o.out + ": is a directory; give a file path such as " + o.out + "/evidence.json");
  const int threads = o.threads ? checked_threads("--threads", *o.threads) : default_threads();
  const double prob_tolerance = checked_tolerance("--prob-tolerance", o.prob_tolerance);
  if (!o.check_equivalence) check_output_file("--out", o.out, o.experiments);  // empty, device, an input
  RunRequest r;
  r.numerics = numerics_request_from(o.numerics);
  r.numerics.threads_asked = o.threads;
  r.shard = checked_shard(o.shard);
  r.shard_text = o.shard;
  r.experiments = load_experiments(o.experiments, checked_max_runs("--max-runs", o.max_runs));
  if (o.top_candidates) {
    if (*o.top_candidates < 0)
      throw UsageError("--top-candidates " + std::to_string(*o.top_candidates) + ": allowed: an integer >= 0");
    for (ExperimentSpec& spec : r.experiments) override_top_candidates(spec, *o.top_candidates);
  }
  apply_engine_flags(o, r);
  r.model = o.model;
  r.out = o.out;
  r.threads = threads;
  r.check_equivalence = o.check_equivalence;
  r.prob_tolerance = prob_tolerance;
  r.json = o.json;
  r.resume = o.resume;
  if (o.resume && o.check_equivalence)
    throw UsageError("--resume with --check-equivalence: the check writes no evidence, so there is nothing to resume; drop one of them");
  if (!o.check_equivalence) {
    r.checkpoint = std::make_shared<CheckpointFile>(CheckpointFile::open(checkpoint_path_for(o.out)));
    r.checkpoint_found = r.checkpoint->read();
    const CheckpointContents& found = r.checkpoint_found;
    if (!o.resume && !found.empty && !found.runs.empty())
      throw UsageError(r.checkpoint->path() + ": holds " + std::to_string(found.runs.size()) +
                       " finished run(s) of an interrupted 'genrepro run'; add --resume to continue it, or delete it to start over");
  }
  return r;
}

}  // namespace

void setup_run(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run experiment files and write evidence.json: every run's parameters, prompt and output ids,\n"
      "text, stop reason and per-step records, with the environment and the model's sha256.\n"
      "Every file is checked before anything runs (docs/experiments.md). Experiment files default\n"
      "to use_cache: false (recompute, the article's), while generate uses the KV cache unless\n"
      "--no-cache; both give the same tokens (--check-equivalence).");
  cmd->add_option("experiments", o->experiments, "Experiment files (JSON), e.g. experiments/article/*.json")->required();
  add_model_flags(*cmd, o->model);
  cmd->add_option("--out", o->out, "Where to write the evidence (atomically, after the last run; until then the finished runs\n"
                  "are kept in <out>.checkpoint: docs/resume.md); missing parent directories are created")
      ->type_name("PATH")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Cores to use: BLAS threads of a batch, or batches at once (docs/numerics.md); the\n"
                  "evidence's runs do not depend on it [default: the CPUs this process may use (affinity,\n"
                  "cgroup quota), at most 8]");
  add_numerics_flags(*cmd, o->numerics);
  cmd->add_option("--max-runs", o->max_runs,
                  "Refuse experiments that expand to more runs than this (counted before expanding;\n"
                  "at most 1000000)")
      ->capture_default_str();
  cmd->add_option("--shard", o->shard,
                  "Run shard I of N: the runs whose index % N == I-1 (join shards with genrepro merge)")
      ->type_name("I/N")
      ->capture_default_str();
  cmd->add_option("--top-candidates", o->top_candidates,
                  "Candidates recorded per step, overriding every experiment's record.top_candidates");
  cmd->add_flag("--check-equivalence", o->check_equivalence,
               "Run every experiment twice, with recompute and with the KV cache, and exit 1 if their\n"
               "tokens differ (first divergence reported as diff does); writes no evidence");
  cmd->add_option("--prob-tolerance", o->prob_tolerance,
                  "With --check-equivalence: probability drift reported beyond this (docs/diff.md)")
      ->capture_default_str();
  cmd->add_flag("--resume", o->resume,
                "Continue an interrupted run from <out>.checkpoint: its finished runs are kept, the rest run;\n"
                "refused if the checkpoint is from other experiments, another model or another build\n"
                "(docs/resume.md). Without a checkpoint it starts from the first run");
  cmd->add_option("--engine", o->engine,
                  "Whose forward pass computes every run's logits, overriding the experiments' \"engine\":\n"
                  "genrepro (its own, the default) or llama.cpp (llama.cpp's C API on the model exported\n"
                  "as GGUF; greedy runs, first predictions and framework llama.cpp; docs/engines.md)")
      ->type_name("NAME");
  add_llama_flags(*cmd, o->llama);
  cmd->add_flag("--json", o->json,
                "Print the summary (evidence path, runs, new tokens, seconds, numerics) or, with\n"
                "--check-equivalence, the verdict and the diff, as one JSON object on stdout");
  on_verb(*cmd, ctx, [o, &ctx] { ctx.exit_code = ctx.engine.run(run_request_from(*o), ctx.io); });
}

}  // namespace genrepro::cli
