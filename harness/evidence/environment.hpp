#pragma once
// What in this process can change the numbers a run produces, read from the process itself
// rather than assumed: the BLAS library actually mapped (and its configuration), the CPU, the
// compiler, the OS, floating-point control state and the environment variables that numerical
// libraries read. libtorch's part (version, build configuration, ATen CPU capability, intra-op
// threads) is filled in by the engine (engine/runtime_environment.hpp); core never includes torch.
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace genrepro {

struct BlasInfo {
  std::optional<std::string> library;   // the mapped object that defines sgemm_, as the loader named it
  std::optional<std::string> resolved;  // its realpath (libblas.so.3 is usually an alternatives symlink)
  std::string vendor = "none";          // openblas | mkl | blis | reference | unknown | none (no sgemm_)
  std::optional<std::string> config;    // openblas_get_config() / MKL version string
  std::optional<std::string> core;      // openblas_get_corename(): the kernel set OpenBLAS picked
  std::optional<int> threads;           // openblas_get_num_threads()
  std::vector<std::string> loaded;      // realpath of every BLAS/LAPACK-like object mapped, sorted
};

struct ThreadSettings {
  int intra_op = 0;                 // at::get_num_threads() (engine)
  int inter_op = 0;                 // at::get_num_interop_threads() (engine)
  std::optional<int> omp_max;       // omp_get_max_threads() of the calling thread, if OpenMP is loaded
  // Runner worker threads; volatile (evidence must not depend on it), absent in a golden.
  std::optional<int> runs_concurrently = 1;
};

// read_cpuinfo() (evidence/kernel_requirements.hpp) and the affinity mask.
struct CpuInfo {
  std::string model;      // /proc/cpuinfo "model name"
  std::string flags;      // /proc/cpuinfo "flags" (which SIMD kernels can be chosen)
  int logical_cores = 0;  // processors listed in /proc/cpuinfo
  int usable_cores = 0;   // in this process's affinity mask
};

// x86 MXCSR: flush-to-zero and denormals-are-zero change float results; so does rounding.
struct FloatControl {
  bool flush_to_zero = false;
  bool denormals_are_zero = false;
  std::string rounding;  // "nearest" | "down" | "up" | "toward_zero"
};

struct Environment {
  // libtorch (filled by the engine)
  std::string libtorch_version;
  std::string torch_config;         // at::show_config()
  std::string torch_parallel_info;  // at::get_parallel_info()
  std::string cpu_capability;       // the ATen kernel set in use: DEFAULT | AVX2 | AVX512
  // process
  BlasInfo blas;
  ThreadSettings threads;
  CpuInfo cpu;
  std::string compiler;             // GENREPRO_COMPILER, e.g. "GNU 12.2.0"
  std::string os;                   // /etc/os-release PRETTY_NAME
  std::string kernel;               // uname: sysname release machine
  std::string dtype = "float32";
  std::string device = "cpu";
  std::optional<FloatControl> float_control;  // empty on non-x86
  std::vector<std::pair<std::string, std::optional<std::string>>> numerics_env;  // unset -> empty
};

// The environment variables recorded in numerics_env, in the order written.
const std::vector<std::string>& numerics_env_names();

// Reads everything core can see; the libtorch fields stay empty and the thread counts 0.
Environment probe_process_environment();

BlasInfo probe_blas();

// The CPUs this process may use: its affinity mask, lowered by a cgroup v2 CPU quota (cpu.max of
// its cgroup and every ancestor, rounded up to whole CPUs). At least 1.
int usable_cpus();

// --threads when not given: usable_cpus(), at most kMaxDefaultThreads. Beyond 8 the decode gains
// little (a batch's GEMMs are small, and each extra worker holds the model's activations), and a
// large host's default stays a sane number; a larger --threads can still be given.
inline constexpr int kMaxDefaultThreads = 8;
int default_threads();

// Sets OpenBLAS's own thread pool size when OpenBLAS is the BLAS in use; returns false when no
// such setter is mapped (another BLAS, or none). Like libtorch's thread count, this can change
// reduction order, so the runner sets it explicitly and records it.
bool set_blas_threads(int threads);

}  // namespace genrepro
