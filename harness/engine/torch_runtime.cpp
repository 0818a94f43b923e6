#include "engine/torch_runtime.hpp"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <ATen/native/DispatchStub.h>
#include <torch/torch.h>

#include "core/errors.hpp"

namespace genrepro {

namespace {

std::string capability_name(at::native::CPUCapability c) {
  switch (c) {
    case at::native::CPUCapability::DEFAULT: return "DEFAULT";
    case at::native::CPUCapability::AVX2: return "AVX2";
    case at::native::CPUCapability::AVX512: return "AVX512";
    default: return "unknown";
  }
}

}  // namespace

TorchRuntimeInfo torch_runtime_info() {
  TorchRuntimeInfo info;
  info.version = TORCH_VERSION;
  info.build_config = at::show_config();
  info.parallel_info = at::get_parallel_info();
  info.cpu_capability = capability_name(at::native::get_cpu_capability());
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

}  // namespace genrepro
