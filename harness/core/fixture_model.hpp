#pragma once
// Fixture models: complete Hugging Face layout directories with GPT-2's real tokenizer files and
// weights drawn from a small documented portable PRNG (not libtorch's), so the weights file is
// byte-identical on every machine and its sha256 can be pinned in a test.
#include <string>

#include "core/model_config.hpp"

namespace genrepro {

enum class FixturePreset { tiny, gpt2_124m_shape };

FixturePreset parse_fixture_preset(const std::string& name);  // throws UsageError
Gpt2Config fixture_config(FixturePreset preset);

// Writes config.json, model.safetensors, vocab.json, merges.txt (copied from tokenizer_dir's
// encoder.json / vocab.bpe or vocab.json / merges.txt) into out_dir, atomically per file.
void write_fixture_model(const std::string& out_dir, FixturePreset preset, const std::string& tokenizer_dir);

}  // namespace genrepro
