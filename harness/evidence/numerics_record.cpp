#include "evidence/numerics_record.hpp"

namespace genrepro {

const char* to_string(NumericsMode mode) {
  switch (mode) {
    case NumericsMode::reference: return "reference";
    case NumericsMode::tiled: return "tiled";
    case NumericsMode::strict: return "strict";
  }
  return "reference";
}

std::optional<NumericsMode> parse_numerics_mode(const std::string& text) {
  if (text == "reference") return NumericsMode::reference;
  if (text == "tiled") return NumericsMode::tiled;
  if (text == "strict") return NumericsMode::strict;
  return std::nullopt;
}

const char* to_string(CpuKernels kernels) {
  return kernels == CpuKernels::portable ? "portable" : "native";
}

std::optional<CpuKernels> parse_cpu_kernels(const std::string& text) {
  if (text == "portable") return CpuKernels::portable;
  if (text == "native") return CpuKernels::native;
  return std::nullopt;
}

OrderedJson numerics_identity_json(const NumericsRecord& n) {
  OrderedJson j = {{"mode", to_string(n.mode)}};
  if (n.mode == NumericsMode::tiled) j["tile"] = n.tile;
  if (n.mode == NumericsMode::strict) j["kernel_revision"] = n.kernel_revision;
  if (n.inexact_batch) j["inexact_batch"] = true;
  if (n.kernels)
    j["cpu_kernels"] = {{"setting", to_string(n.kernels->setting)},
                        {"blas_core", n.kernels->blas_core},
                        {"aten_capability", n.kernels->aten_capability}};
  return j;
}

OrderedJson numerics_to_json(const NumericsRecord& n) {
  OrderedJson j = numerics_identity_json(n);
  if (!n.execution.empty()) j["execution"] = n.execution;
  return j;
}

}  // namespace genrepro
