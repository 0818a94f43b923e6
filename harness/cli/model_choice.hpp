#pragma once
// Which model a verb runs on, as its flags say: --model DIR (or `gpt2`: the Hugging Face cache's)
// and --require-real-model. Every verb that needs a model declares the two flags here, so they
// read the same and resolve the same way (model_files.hpp's resolve_model).
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "model/model_files.hpp"

namespace genrepro::cli {

struct ModelChoice {
  std::optional<std::string> dir;  // --model; empty: $GENREPRO_MODEL, the HF cache's gpt2, the fixture
  bool require_real = false;       // --require-real-model: the fixture fallback is an error
};

void add_model_flags(CLI::App& cmd, ModelChoice& choice, const std::string& extra_help = "");

// resolve_model with the default tokenizer and cache directories.
ModelFiles resolve_chosen_model(const ModelChoice& choice);

}  // namespace genrepro::cli
