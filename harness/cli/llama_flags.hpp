#pragma once
// The llama.cpp engine's flags, shared by run and generate (docs/engines.md): where its library
// is and the settings that decide its bits. --engine itself is a run parameter (generate reads it
// from the parameter table; run overrides every experiment's with it).
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "llama/llama_settings.hpp"

namespace genrepro::cli {

struct LlamaFlags {
  std::optional<std::string> library;  // --llama-lib
  std::string kv_type = "f16";
  std::string flash_attn = "auto";
};

void add_llama_flags(CLI::App& verb, LlamaFlags& flags);

// The library (--llama-lib, else $GENREPRO_LLAMA_LIB, else empty) and settings, checked: a bad
// value is UsageError naming the flag, the value and what is allowed.
struct LlamaChoice {
  std::string library;
  llama::LlamaSettings settings;
};
LlamaChoice llama_choice_from(const LlamaFlags& flags);

}  // namespace genrepro::cli
