#pragma once
// The verbs that run the model, behind cli/verbs.hpp's EngineVerbs. Compiled into
// libgenrepro_engine_verbs.so, which the genrepro binary opens on first use and tests link.
#include "cli/verbs.hpp"

namespace genrepro::cli {

int generate_text(const GenerateRequest& request, Console& io);
int run_experiments(const RunRequest& request, Console& io);
int replay_golden_runs(const ReplayRequest& request, Console& io);
int print_environment(const EnvRequest& request, Console& io);

// The engine verbs of this library (what genrepro_engine_verbs() returns).
EngineVerbs& local_engine_verbs();

}  // namespace genrepro::cli
