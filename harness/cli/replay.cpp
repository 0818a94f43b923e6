// genrepro replay GOLDEN: teacher-force the golden tokens through this build and report how far
// each golden token's log-probability drifted (docs/diff.md, "replay").
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/verbs.hpp"
#include "core/evidence_diff.hpp"
#include "core/model_files.hpp"
#include "engine/replay.hpp"

namespace genrepro::cli {

namespace {

struct ReplayArgs {
  std::string golden;  // an evidence file or a directory of them
  std::optional<std::string> model;
  bool json = false;
  double logprob_tolerance = kDefaultLogProbTolerance;
  int threads = 1;
  std::string forward = "as-run";
  bool allow_model_mismatch = false;
};

constexpr int kExitWithin = 0;
constexpr int kExitBeyond = 1;

int run_replay(const ReplayArgs& a) {
  // GOLDEN needs no model: its errors come before any model is located (or made).
  const std::vector<EvidenceFile> golden = load_golden(a.golden);
  ReplayOptions o;
  o.logprob_tolerance = a.logprob_tolerance;
  o.threads = a.threads;
  o.forward = parse_replay_forward(a.forward);
  o.allow_model_mismatch = a.allow_model_mismatch;
  o.model = resolve_model({a.model, default_tokenizer_dir(), default_cache_dir()});
  o.on_checked = [&](const std::vector<ModelMismatch>& mismatches) {
    std::cerr << o.model.source_note << "\n";
    for (const ModelMismatch& m : mismatches) std::cerr << "genrepro: warning: " << describe_mismatch(m) << "\n";
  };
  const ReplayReport report = replay_golden(golden, o);
  if (a.json)
    std::cout << replay_to_json(report).dump(2, ' ', false, EvidenceJson::error_handler_t::replace) << "\n";
  else
    std::cout << format_replay_text(report);
  return report.within() ? kExitWithin : kExitBeyond;
}

}  // namespace

void setup_replay(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay",
      "Teacher-force every golden run's tokens through this build (the run's own sampler chain and\n"
      "logits path) and report, per run, the drift of each golden token's log-probability: max and\n"
      "mean |Δ log p| in the final distribution and at T = 1, the step of the max, golden tokens now\n"
      "outside the kept set, and the step where this build's own pick would part. Drift is measured\n"
      "over the whole run, also after the paths would diverge (docs/diff.md, \"replay\").\n"
      "Exit: 0 every run within --logprob-tolerance, 1 beyond, 2 bad input or other weights.");
  cmd->add_option("GOLDEN", a->golden, "Golden evidence file, or a directory of them (e.g. golden/fixture)")->required();
  cmd->add_option("--model", a->model,
                  "Model directory (HF layout or cache) [default: $GENREPRO_MODEL, the HF cache's gpt2,\n"
                  "else the tiny fixture]; must hold the golden's weights (sha256)");
  cmd->add_flag("--json", a->json, "Print the machine-readable report (schema genrepro.replay/1, docs/diff.md)");
  cmd->add_option("--logprob-tolerance", a->logprob_tolerance,
                  "Largest |Δ log p| a run may show and pass (docs/diff.md says why the default)")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Runs replayed at once, each on one intra-op thread; results do not depend on it")
      ->capture_default_str();
  cmd->add_option("--forward", a->forward,
                  "as-run (each run's own use_cache) | recompute | cached: replay every run through one path\n"
                  "to measure what the KV cache changes numerically")
      ->capture_default_str();
  cmd->add_flag("--allow-model-mismatch", a->allow_model_mismatch,
                "Replay even when the golden was made with other weights (warns; the drift then says little)");
  cmd->callback([a, &exit_code] { exit_code = run_replay(*a); });
}

}  // namespace genrepro::cli
