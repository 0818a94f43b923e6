// genrepro env: the environment block of evidence.json, alone, as `genrepro run` records it.
#include <iostream>
#include <memory>

#include "cli/verbs.hpp"
#include "core/evidence.hpp"
#include "engine/run_environment.hpp"

namespace genrepro::cli {

void setup_env(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "env",
      "Print the environment block that genrepro run records (libtorch, the BLAS library actually\n"
      "loaded, CPU capability, threads, CPU, compiler, OS, numerics variables) as JSON.");
  cmd->callback([&exit_code] {
    // The same thread settings a run uses, so the block printed is the block recorded.
    prepare_runtime_for_runs();
    std::cout << environment_to_json(collect_environment(1)).dump(2) << "\n";
    exit_code = 0;
  });
}

}  // namespace genrepro::cli
