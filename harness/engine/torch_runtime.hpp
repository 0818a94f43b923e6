#pragma once
// libtorch's side of the environment: version, build configuration, the CPU kernel set ATen
// dispatches to, and thread counts. Threads are set here, explicitly, and nowhere else.
#include <string>

namespace genrepro {

struct TorchRuntimeInfo {
  std::string version;         // e.g. "1.13.0"
  std::string build_config;    // at::show_config()
  std::string parallel_info;   // at::get_parallel_info()
  std::string cpu_capability;  // "DEFAULT" | "AVX2" | "AVX512": the kernels ATen actually uses
  int intra_op_threads = 0;
  int inter_op_threads = 0;
};

TorchRuntimeInfo torch_runtime_info();

// Sets libtorch's intra-op threads. Thread counts change reduction order and so float results;
// callers pass the value the user chose (default 1), never the machine's core count.
void set_torch_threads(int intra_op_threads);

}  // namespace genrepro
