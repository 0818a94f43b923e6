#include "engine/run_environment.hpp"

#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "engine/torch_runtime.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {
constexpr int kThreadsPerRun = 1;

// Each decoding step allocates and frees the same large buffers (the logits rows: 10 MB for a
// 50-token prompt without the cache). glibc's defaults hand that memory back to the kernel at
// each free (the heap is trimmed, or the block was its own mmap), so every step faults the pages
// in again and zeroes them: a third of a short run's CPU time. Keeping freed memory in the heap
// for the next step costs nothing but resident memory already used once. Allocation changes no
// number: libtorch aligns every tensor to 64 bytes whatever the allocator returns.
constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's largest on 64-bit; above it, mmap
constexpr int kTrimThresholdBytes = 256 << 20;

void keep_freed_memory_for_the_next_step() {
#if defined(__GLIBC__)
  // Both are set: setting either one alone turns off glibc's adaptive threshold, which is worse.
  mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
#endif
}
}  // namespace

void prepare_runtime_for_runs() {
  // at::set_num_threads is process-wide; libtorch 1.13's OpenMP backend applies it lazily to
  // every thread that enters a parallel region, so the runner's worker threads inherit it.
  set_torch_threads(kThreadsPerRun);
  set_blas_threads(kThreadsPerRun);  // no-op (false) when the BLAS is not OpenBLAS
  keep_freed_memory_for_the_next_step();
}

KernelRecord loaded_kernels(CpuKernels setting) {
  const BlasInfo blas = probe_blas();
  KernelRecord k;
  k.setting = setting;
  k.blas_core = blas.vendor == "openblas" ? blas.core.value_or("unknown") : blas.vendor;
  k.aten_capability = torch_runtime_info().cpu_capability;
  if (setting == CpuKernels::native) return k;
  const std::string native_hint = "; --cpu-kernels native runs with the kernels this machine picks (its bits are this CPU's only)";
  if (blas.vendor != "openblas")
    throw UsageError("--cpu-kernels portable: the BLAS in use is " + blas.vendor + " (" + blas.resolved.value_or("no sgemm_") +
                     "), not OpenBLAS, whose " + kPortableBlasCore + " kernels portable pins" + native_hint);
  if (k.blas_core != kPortableBlasCore)
    throw UsageError("--cpu-kernels portable: OpenBLAS loaded its " + k.blas_core + " kernels, not " + kPortableBlasCore +
                     " (it ignored " + kOpenblasCoretypeEnv + "=" + kPortableBlasCoreEnv +
                     ": a build without DYNAMIC_ARCH, or a process that loaded libtorch before genrepro could set it)" + native_hint);
  if (k.aten_capability != kPortableAtenCapability)
    throw UsageError("--cpu-kernels portable: ATen uses its " + k.aten_capability + " kernels, not " + kPortableAtenCapability +
                     " (it ignored " + kAtenCpuCapabilityEnv + "=" + kPortableAtenEnv + ")" + native_hint);
  return k;
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
