#pragma once
// The engine verbs, loaded on first use: libgenrepro_engine_verbs.so (libtorch and ~290 shared
// libraries with it) is opened only when a verb that runs the model is called, so diff, bless,
// report, merge, check-article, tokenize, fixture, env --no-engine and --help start in
// milliseconds. The library is looked up next to the running executable. A strict `run` or
// `generate` opens libgenrepro_engine_verbs_strict.so instead where it exists (the libtorch build):
// the same engine built without libtorch, which strict numerics never call.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/verbs.hpp"

namespace genrepro::cli {

// The name of the symbol the engine library exports: `EngineVerbs& genrepro_engine_verbs()`.
inline constexpr const char* kEngineVerbsSymbol = "genrepro_engine_verbs";
inline constexpr const char* kEngineLibraryName = "libgenrepro_engine_verbs.so";
// The libtorch build's engine without libtorch, which strict runs open (CMakeLists.txt).
inline constexpr const char* kStrictEngineLibraryName = "libgenrepro_engine_verbs_strict.so";

// --cpu-kernels portable, before the engine loads: refuses (UsageError) a CPU without AVX2 or
// FMA (portable_flags() against this_cpu_flags(), evidence/kernel_requirements.hpp), then sets
// OPENBLAS_CORETYPE=Haswell and ATEN_CPU_CAPABILITY=avx2 in this process's environment, where
// OpenBLAS (at load) and ATen (at first dispatch) read them. Returns the
// user's own values it replaced. The engine reads back what was loaded (engine/run_environment.hpp)
// and refuses a BLAS or ATen that ignored them. `native` changes nothing.
// GENREPRO_TEST_HIDE_CPU_FEATURES ("avx2", "fma", comma-separated) makes the CPU check see
// those features as absent: tests use it to show the refusal on machines that have them.
// First (check_engine_environment): OMP_NUM_THREADS, when set, is a whole number >= 1 (libtorch
// prints a backtrace for anything else), and with `native` an OPENBLAS_CORETYPE that names a
// core whose instructions this CPU lacks is refused (OpenBLAS would run them: SIGILL).
std::vector<std::pair<std::string, std::string>> prepare_cpu_kernels(CpuKernels kernels);
void check_engine_environment(CpuKernels kernels);

// An EngineVerbs whose every call first loads the engine library (once), then forwards.
std::unique_ptr<EngineVerbs> engine_loaded_on_first_use();

}  // namespace genrepro::cli
