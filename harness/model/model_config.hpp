#pragma once
// GPT-2's hyper-parameters from Hugging Face's config.json.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace genrepro {

struct Gpt2Config {
  int64_t vocab_size = 50257;   // V
  int64_t n_positions = 1024;   // maximum context
  int64_t n_embd = 768;         // C
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_inner = 0;          // 0 / null in config.json means 4 * n_embd
  double layer_norm_epsilon = 1e-5;
  std::string activation_function = "gelu_new";
  int64_t bos_token_id = 50256;
  int64_t eos_token_id = 50256;
  bool scale_attn_weights = true;
  nlohmann::json raw;           // config.json as read, recorded in the evidence

  int64_t head_dim() const { return n_embd / n_head; }
  int64_t mlp_width() const { return n_inner > 0 ? n_inner : 4 * n_embd; }
};

// Reads and validates config.json. Throws ModelFileError naming the file and the field
// (missing file, not JSON, wrong type, non-positive sizes, n_embd not divisible by n_head,
// an activation other than gelu_new / gelu, ...).
Gpt2Config read_gpt2_config(const std::string& path);
Gpt2Config parse_gpt2_config(const nlohmann::json& j, const std::string& path_for_errors);

}  // namespace genrepro
