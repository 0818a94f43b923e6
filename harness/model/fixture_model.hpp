#pragma once
// Fixture models: complete Hugging Face layout directories with GPT-2's real tokenizer files and
// weights drawn from a small documented portable PRNG (not libtorch's), so the weights file is
// byte-identical on every machine and its sha256 can be pinned in a test.
#include <functional>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "model/safetensors.hpp"

namespace genrepro {

// near_tie: the tiny fixture with planted near-ties (model/near_tie.hpp), for the sensitivity matrix.
enum class FixturePreset { tiny, gpt2_124m_shape, near_tie };

FixturePreset parse_fixture_preset(const std::string& name);  // throws UsageError
const char* to_string(FixturePreset p);                         // "tiny", "gpt2-124m-shape", "near-tie"
Gpt2Config fixture_config(FixturePreset preset);

// Writes config.json, model.safetensors, vocab.json, merges.txt (copied from tokenizer_dir's
// encoder.json / vocab.bpe or vocab.json / merges.txt) into out_dir, atomically per file.
void write_fixture_model(const std::string& out_dir, FixturePreset preset, const std::string& tokenizer_dir);
// The same, calling progress("tensor 3/29 h.0.ln_1.weight [64]") before each tensor is generated.
void write_fixture_model(const std::string& out_dir, FixturePreset preset, const std::string& tokenizer_dir,
                         const std::function<void(const std::string&)>& progress);

// The tensors model.safetensors holds, in file order (parameters plus the h.N.attn.bias masks),
// and one tensor's values: exposed so tests can check the generator without writing files.
std::vector<SafetensorsEntry> fixture_tensor_entries(FixturePreset preset);
std::vector<float> fixture_tensor_values(FixturePreset preset, const SafetensorsEntry& entry);

}  // namespace genrepro
