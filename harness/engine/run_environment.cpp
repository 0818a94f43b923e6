#include "engine/run_environment.hpp"

#include "engine/torch_runtime.hpp"

namespace genrepro {

namespace {
constexpr int kThreadsPerRun = 1;
}  // namespace

void prepare_runtime_for_runs() {
  // at::set_num_threads is process-wide; libtorch 1.13's OpenMP backend applies it lazily to
  // every thread that enters a parallel region, so the runner's worker threads inherit it.
  set_torch_threads(kThreadsPerRun);
  set_blas_threads(kThreadsPerRun);  // no-op (false) when the BLAS is not OpenBLAS
}

Environment collect_environment(int runs_concurrently) {
  Environment env = probe_process_environment();
  const TorchRuntimeInfo torch = torch_runtime_info();
  env.libtorch_version = torch.version;
  env.torch_config = torch.build_config;
  env.torch_parallel_info = torch.parallel_info;
  env.cpu_capability = torch.cpu_capability;
  env.threads.intra_op = torch.intra_op_threads;
  env.threads.inter_op = torch.inter_op_threads;
  env.threads.runs_concurrently = runs_concurrently;
  return env;
}

}  // namespace genrepro
