#include "cli/engine/engine_verbs.hpp"

#include "engine/run_environment.hpp"
#include "evidence/evidence.hpp"

namespace genrepro::cli {

namespace {

class LocalEngineVerbs final : public EngineVerbs {
 public:
  int generate(const GenerateRequest& r, Console& io) override { return generate_text(r, io); }
  int run(const RunRequest& r, Console& io) override { return run_experiments(r, io); }
  int replay(const ReplayRequest& r, Console& io) override { return replay_golden_runs(r, io); }
  int env(const EnvRequest& r, Console& io) override { return print_environment(r, io); }
};

}  // namespace

int print_environment(const EnvRequest& r, Console& io) {
  // Refused where run would refuse: env is how a CI job checks a machine before its runs.
  loaded_kernels(r.cpu_kernels);
  // The same thread settings a run uses, so the block printed is the block recorded.
  prepare_runtime_for_runs();
  io.out << environment_to_json(collect_environment(1)).dump(2) << "\n";
  return kExitOk;
}

EngineVerbs& local_engine_verbs() {
  static LocalEngineVerbs verbs;  // stateless; one per process is all there is to have
  return verbs;
}

}  // namespace genrepro::cli

// What cli/engine_loader.cpp looks up after dlopen.
extern "C" __attribute__((visibility("default"))) genrepro::cli::EngineVerbs& genrepro_engine_verbs() {
  return genrepro::cli::local_engine_verbs();
}
