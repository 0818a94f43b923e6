#pragma once
// `genrepro replay GOLDEN`: teacher-forces every golden run's tokens through the current build
// and measures, step by step, how far the golden token's log-probability moved. diff stops
// comparing at the first divergent token (after it the contexts differ); replay keeps feeding
// the golden tokens, so it measures numerical drift over the whole run even where this build's
// own choice would have parted (docs/diff.md, "replay").
//
// Each step is recomputed exactly as the loop computes it (engine/generation_loop.hpp): the same
// logits source (recompute for use_cache=false, the KV cache fed token by token otherwise), the
// same sampler chain, seeded as the run was (engine/run_chain.hpp) and the same step description
// (describe_step), so replaying a golden made by this build on this machine drifts by exactly 0.
#include <cstdint>
#include <functional>
#include <ostream>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "compare/replay_report.hpp"
#include "model/model_files.hpp"
#include "util/progress.hpp"

namespace genrepro {

struct ReplayOptions {
  ModelFiles model;
  double logprob_tolerance = kDefaultLogProbTolerance;
  int threads = 1;     // runs replayed at once, each on one intra-op thread (as `run`)
  ReplayForward forward = ReplayForward::as_run;
  // Replay even when the golden was made with other weights (the drift then says little).
  bool allow_model_mismatch = false;
  // Called once GOLDEN and the model's digest are checked, before the model loads, with the
  // mismatches allowed (the CLI names the model and prints the warnings then, so that an error
  // before it stays the only line on stderr).
  std::function<void(const std::vector<ModelMismatch>&)> on_checked;
  std::ostream* progress = nullptr;  // where progress goes (runs replayed, tokens/s), or nullptr
  ProgressStyle progress_style = ProgressStyle::live;  // a redrawn line, or plain lines for CI logs
};

// `golden` as read_golden reads GOLDEN (a file or a directory; its structure, such as steps
// matching output_ids, checked then). Checks every run against the model (ids within the
// vocabulary, the sequence within the context) and the probabilities replay compares (in
// [0, 1]) before the model loads, then replays the runs. Throws EvidenceError naming the file
// and JSON path for a bad golden or a weights mismatch (unless allowed), UsageError for a bad
// tolerance or thread count; ModelFileError from the model.
ReplayReport replay_golden(const std::vector<EvidenceFile>& golden, const ReplayOptions& options);

}  // namespace genrepro
