// genrepro replay, the part that runs the model (GOLDEN and the flags are checked in cli/replay.cpp).
#include <string>
#include <vector>

#include "cli/engine/engine_verbs.hpp"
#include "engine/replay.hpp"
#include "engine/run_environment.hpp"
#include "model/model_files.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

constexpr int kExitWithin = 0;
constexpr int kExitBeyond = 1;

}  // namespace

int replay_golden_runs(const ReplayRequest& a, Console& io) {
  loaded_kernels(a.cpu_kernels);  // the drift measured is of these kernels; refused as run refuses
  genrepro::ReplayOptions o;
  o.logprob_tolerance = a.logprob_tolerance;
  o.threads = a.threads;
  o.forward = a.forward;
  o.allow_model_mismatch = a.allow_model_mismatch;
  o.model = resolve_chosen_model(a.model);
  // A live line on a terminal; in a CI log a plain line at most every 10 s (util/progress.hpp).
  o.progress = &io.err;
  o.progress_style = progress_style(io.err_is_terminal);
  o.on_checked = [&](const std::vector<ModelMismatch>& mismatches) {
    io.err << o.model.source_note << "\n";
    for (const ModelMismatch& m : mismatches) io.err << "genrepro: warning: " << describe_mismatch(m) << "\n";
  };
  const ReplayReport report = replay_golden(a.golden, o);
  // "ok" needs something compared: runs that stopped before their first step (a prompt that fills
  // the context) leave nothing to compare, and that is no evidence of reproduction.
  const int64_t compared = report.logp.compared + report.logp.infinite + report.logp_unfiltered.compared +
                           report.logp_unfiltered.infinite;
  if (compared == 0)
    throw UsageError("replay: nothing compared: the " + std::to_string(report.runs.size()) +
                     " golden run(s) hold no step with a probability to recompute; give golden evidence whose runs have steps");
  if (a.json)
    io.out << replay_to_json(report).dump(2, ' ', false, OrderedJson::error_handler_t::replace) << "\n";
  else
    io.out << format_replay_text(report);
  return report.within() ? kExitWithin : kExitBeyond;
}

}  // namespace genrepro::cli
