// genrepro replay GOLDEN: teacher-force the golden tokens through this build and report how far
// each golden token's log-probability drifted (docs/diff.md, "replay").
#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "cli/flag_kinds.hpp"
#include "cli/numerics_flags.hpp"
#include "util/build_features.hpp"
#include "util/errors.hpp"
#include "cli/verbs.hpp"
#include "evidence/evidence.hpp"
#include "compare/replay_report.hpp"

namespace genrepro::cli {

namespace {

struct ReplayOptions {
  std::string golden;  // an evidence file or a directory of them
  ModelChoice model;
  bool json = false;
  double logprob_tolerance = kDefaultLogProbTolerance;
  int threads = 1;
  std::string forward = "as-run";
  bool allow_model_mismatch = false;
  std::string cpu_kernels = "portable";
};

ReplayRequest replay_request_from(const ReplayOptions& a) {
  ReplayRequest r;
  r.threads = checked_threads("--threads", a.threads);
  r.logprob_tolerance = checked_tolerance("--logprob-tolerance", a.logprob_tolerance);
  // GOLDEN needs no model: its errors come before any model is located (or made).
  r.golden = read_golden(a.golden);
  // Replay teacher-forces through genrepro's own forward: llama.cpp's runs are compared by running
  // them again on llama.cpp's engine and diffing, not by replaying them here.
  for (const EvidenceFile& f : r.golden)
    for (const RunRecord& run : f.evidence.runs)
      if (run.params.engine == Engine::llama_cpp)
        throw UsageError("replay " + f.path + ": run " + run.id + " ran on engine llama.cpp, and replay runs genrepro's "
                         "forward; run the experiment again with 'genrepro run --engine llama.cpp' and 'genrepro diff' "
                         "the two (docs/engines.md)");
  r.forward = parse_replay_forward(a.forward);
  r.model = a.model;
  r.json = a.json;
  r.allow_model_mismatch = a.allow_model_mismatch;
  r.cpu_kernels = cpu_kernels_from(a.cpu_kernels);
  // Strict evidence replays on genrepro's own kernels: no library kernel decides a bit, so none is
  // pinned (portable's pins would refuse the CPUs strict is for) and --cpu-kernels is not asked.
  const bool all_strict = std::all_of(r.golden.begin(), r.golden.end(), [](const EvidenceFile& f) {
    return f.evidence.numerics && f.evidence.numerics->mode == NumericsMode::strict;
  });
  if (all_strict) r.cpu_kernels = CpuKernels::native;
  else if (!kBuiltWithLibtorch) throw UsageError("replay " + a.golden + ": evidence not in strict numerics: " + kLibtorchNeeded);
  return r;
}

}  // namespace

void setup_replay(CLI::App& app, VerbContext& ctx) {
  auto a = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Teacher-force every golden run's tokens through this build (the run's own sampler chain and\n"
      "logits path) and report, per run, the drift of each golden token's log-probability: max and\n"
      "mean |Δ log p| in the final distribution and at T = 1, the step of the max, golden tokens now\n"
      "outside the kept set, and the step where this build's own pick would part. Drift is measured\n"
      "over the whole run, also after the paths would diverge (docs/diff.md, \"replay\").\n"
      "Exit: 0 every run within --logprob-tolerance, 1 beyond, 2 bad input or other weights.");
  cmd->add_option("GOLDEN", a->golden, "Golden evidence file, or a directory of them (e.g. golden/fixture)")
      ->type_name("PATH")
      ->required();
  add_model_flags(*cmd, a->model, "; must hold the golden's weights (sha256)");
  cmd->add_flag("--json", a->json, "Print the machine-readable report (schema genrepro.replay/1, docs/diff.md)");
  cmd->add_option("--logprob-tolerance", a->logprob_tolerance,
                  "Largest |Δ log p| a run may show and pass (docs/diff.md says why the default)")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Runs replayed at once, each on one intra-op thread; results do not depend on it")
      ->capture_default_str();
  add_cpu_kernels_flag(*cmd, a->cpu_kernels);
  cmd->add_option("--forward", a->forward,
                  "as-run (each run's own use_cache) | recompute | cached: replay every run through one path\n"
                  "to measure what the KV cache changes numerically")
      ->capture_default_str();
  cmd->add_flag("--allow-model-mismatch", a->allow_model_mismatch,
                "Replay even when the golden was made with other weights (warns; the drift then says little)");
  on_verb(*cmd, ctx, [a, &ctx] { ctx.exit_code = ctx.engine.replay(replay_request_from(*a), ctx.io); });
}

}  // namespace genrepro::cli
