// genrepro env: the environment block of evidence.json, alone, as `genrepro run` records it.
#include <memory>

#include "cli/numerics_flags.hpp"
#include "cli/verbs.hpp"
#include "evidence/environment.hpp"
#include "evidence/evidence.hpp"
#include "util/build_features.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

void setup_env(CLI::App& app, VerbContext& ctx) {
  auto no_engine = std::make_shared<bool>(false);
  auto kernels = std::make_shared<std::string>("portable");
  CLI::App* cmd = app.add_subcommand(
      "env",
      "Print the environment block that genrepro run records (libtorch, the BLAS library actually\n"
      "loaded, CPU capability, threads, CPU, compiler, OS, numerics variables) as JSON.");
  cmd->add_flag("--no-engine", *no_engine,
                "Without loading libtorch: what the process alone shows (CPU, OS, compiler, variables);\n"
                "libtorch's fields stay empty and no BLAS is loaded");
  CLI::Option* kernels_flag = add_cpu_kernels_flag(*cmd, *kernels);
  on_verb(*cmd, ctx, [no_engine, kernels, kernels_flag, &ctx] {
    EnvRequest request;
    request.cpu_kernels = cpu_kernels_from(*kernels);
    // A libtorch-free build loads no library kernels: nothing to pin, nothing to check.
    if (!kBuiltWithLibtorch) {
      if (kernels_flag->count() > 0) throw UsageError("--cpu-kernels " + *kernels + ": " + kLibtorchNeeded);
      request.cpu_kernels = CpuKernels::native;
    }
    if (*no_engine) {
      ctx.io.out << json_document_text(environment_to_json(probe_process_environment())) << "\n";
      ctx.exit_code = kExitOk;
      return;
    }
    ctx.exit_code = ctx.engine.env(request, ctx.io);
  });
}

}  // namespace genrepro::cli
