#pragma once
// The tensors a GPT-2 checkpoint must hold, with the shapes config.json implies, and the check
// that a safetensors file has them. Names are the official `gpt2` checkpoint's (wte.weight,
// h.{i}.attn.c_attn.weight, ...); files may also carry them under a "transformer." prefix.
// Conv1D weights are stored [in, out]. No libtorch here: the forward pass calls these before
// it touches any tensor data.
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "model/safetensors.hpp"

namespace genrepro {

struct ExpectedTensor {
  std::string name;            // Hugging Face name without prefix, e.g. "h.0.attn.c_attn.weight"
  std::vector<int64_t> shape;  // from config.json, e.g. [n_embd, 3 * n_embd]
  std::string because;         // which config fields set the shape, for error messages: "n_embd 64"
};

// Every parameter GPT2LMHeadModel reads, in checkpoint order: wte, wpe, h.0 ... h.{L-1}, ln_f.
// Excludes the h.N.attn.bias causal-mask buffer (not a parameter) and lm_head (tied to wte).
std::vector<ExpectedTensor> expected_gpt2_tensors(const Gpt2Config& config);

// True for buffers a checkpoint may carry that the forward pass ignores:
// h.N.attn.bias (the [1, 1, n_positions, n_positions] causal mask) and h.N.attn.masked_bias.
bool is_skipped_gpt2_buffer(const std::string& name);

// The name under which `hf_name` is stored: `hf_name` itself, else "transformer." + hf_name.
// Throws ModelFileError "<file>: missing tensor 'wte.weight' (also looked for 'transformer.wte.weight') ...".
std::string find_tensor_name(const SafetensorsFile& file, const std::string& hf_name);

// Checks that every expected tensor exists with the shape config.json implies, e.g. throws
// "<file>: tensor 'h.0.attn.c_attn.weight' has shape [64, 190], expected [64, 192] from config.json
// (n_embd 64)". Skipped buffers are not checked; extra unknown tensors are allowed.
void check_gpt2_tensors(const SafetensorsFile& file, const Gpt2Config& config);

}  // namespace genrepro
