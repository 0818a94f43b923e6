#pragma once
// The environment block of evidence.json: what core reads from the process (BLAS, CPU, OS,
// variables) joined with what only libtorch can say (version, build, CPU capability, threads).
#include "evidence/environment.hpp"
#include "evidence/numerics_record.hpp"

namespace genrepro {

// The thread settings every run executes under, set explicitly before anything runs: one
// libtorch intra-op thread and one BLAS thread per run. Concurrency comes from running several
// runs at once (--threads), never from splitting one run, so a run's numbers cannot depend on
// how many ran beside it. Also keeps memory freed by one decoding step for the next (glibc's
// allocator thresholds; no number depends on them).
void prepare_runtime_for_runs();

// The kernels this process really loaded (openblas_get_corename(), ATen's capability), for the
// evidence. For `portable`, throws UsageError (exit 2) unless they are the portable ones: a
// non-OpenBLAS BLAS, a BLAS that ignored OPENBLAS_CORETYPE, or an ATen that ignored
// ATEN_CPU_CAPABILITY would otherwise have "portable" written over bits that are not.
KernelRecord loaded_kernels(CpuKernels setting);

// probe_process_environment() plus libtorch's part. `runs_concurrently` is recorded as given.
Environment collect_environment(int runs_concurrently);

}  // namespace genrepro
