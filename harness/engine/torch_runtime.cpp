#include "engine/torch_runtime.hpp"

#include "util/errors.hpp"

#if GENREPRO_WITH_LIBTORCH
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/torch.h>
#endif

namespace genrepro {

#if GENREPRO_WITH_LIBTORCH

namespace {

// at::native::get_cpu_capability() is not exported by Debian's libtorch_cpu.so (the link fails),
// but at::show_config() reports the same value on its "CPU capability usage: AVX2" line.
std::string capability_from_config(const std::string& config) {
  const std::string key = "CPU capability usage: ";
  const size_t at = config.find(key);
  if (at == std::string::npos) return "unknown";
  const size_t begin = at + key.size();
  const size_t end = config.find_first_of("\r\n", begin);
  return config.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace

TorchRuntimeInfo torch_runtime_info() {
  TorchRuntimeInfo info;
  info.version = TORCH_VERSION;
  info.build_config = at::show_config();
  info.parallel_info = at::get_parallel_info();
  info.cpu_capability = capability_from_config(info.build_config);
  info.intra_op_threads = at::get_num_threads();
  info.inter_op_threads = at::get_num_interop_threads();
  return info;
}

void set_torch_threads(int intra_op_threads) {
  if (intra_op_threads < 1) {
    throw UsageError("--threads " + std::to_string(intra_op_threads) + ": must be a whole number >= 1");
  }
  at::set_num_threads(intra_op_threads);
}

#else  // an engine without libtorch: strict numerics only, and nothing of libtorch's to record

// The libtorch-free build, or the libtorch build's strict-only engine (CMakeLists.txt), which a
// strict run opens instead of the one that loads libtorch.
#ifndef GENREPRO_NO_LIBTORCH_BECAUSE
#define GENREPRO_NO_LIBTORCH_BECAUSE "libtorch-free build"
#endif

TorchRuntimeInfo torch_runtime_info() {
  TorchRuntimeInfo info;
  info.version = "none (" GENREPRO_NO_LIBTORCH_BECAUSE ")";
  info.cpu_capability = "none";
  // What the evidence requires of a process that runs every forward on threads of its own.
  info.intra_op_threads = 1;
  info.inter_op_threads = 1;
  return info;
}

void set_torch_threads(int intra_op_threads) {
  if (intra_op_threads < 1) {
    throw UsageError("--threads " + std::to_string(intra_op_threads) + ": must be a whole number >= 1");
  }
}

#endif  // GENREPRO_WITH_LIBTORCH

}  // namespace genrepro
