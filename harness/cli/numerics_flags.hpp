#pragma once
// --numerics, --batch, --allow-inexact-batch and --cpu-kernels, shared by run and generate
// (docs/numerics.md); --cpu-kernels alone for replay and env.
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "evidence/numerics_record.hpp"

namespace genrepro::cli {

struct NumericsFlags {
  std::string mode = "strict";
  bool mode_given = false;  // --cpu-kernels or --allow-inexact-batch without --numerics mean reference
  std::optional<int64_t> batch;
  bool allow_inexact_batch = false;
  std::string cpu_kernels = "portable";
  bool cpu_kernels_given = false;  // strict numerics refuse a --cpu-kernels they would not use
};

void add_numerics_flags(CLI::App& verb, NumericsFlags& flags);
CLI::Option* add_cpu_kernels_flag(CLI::App& verb, std::string& cpu_kernels);

// Throws UsageError for anything but portable or native.
CpuKernels cpu_kernels_from(const std::string& text);

// Throws UsageError (one line, the flag, the value, what is allowed) before anything runs.
NumericsRequest numerics_request_from(const NumericsFlags& flags);

}  // namespace genrepro::cli
