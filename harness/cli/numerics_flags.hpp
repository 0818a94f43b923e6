#pragma once
// --numerics, --batch and --allow-inexact-batch, shared by run and generate (docs/numerics.md).
#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "evidence/numerics_record.hpp"

namespace genrepro::cli {

struct NumericsFlags {
  std::string mode = "reference";
  std::optional<int64_t> batch;
  bool allow_inexact_batch = false;
};

void add_numerics_flags(CLI::App& verb, NumericsFlags& flags);

// Throws UsageError (one line, the flag, the value, what is allowed) before anything runs.
NumericsRequest numerics_request_from(const NumericsFlags& flags);

}  // namespace genrepro::cli
