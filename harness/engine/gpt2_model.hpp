#pragma once
// GPT-2 forward pass in libtorch, float32 on CPU, following Hugging Face's eager GPT2LMHeadModel
// step by step. Tensor names are the checkpoint's (wte, wpe, h.{i}.ln_1, h.{i}.attn.c_attn, ...).
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "model/model_config.hpp"
#include "model/model_files.hpp"

namespace genrepro {

// Keys and values of every layer for the tokens seen so far: [n_layer] x [n_head, T, head_dim].
struct KvCache {
  std::vector<torch::Tensor> keys;
  std::vector<torch::Tensor> values;
  int64_t length = 0;  // tokens already in the cache
};

class Gpt2Model {
 public:
  // Loads config.json and model.safetensors; tensor names with or without the "transformer."
  // prefix; skips h.N.attn.bias / h.N.attn.masked_bias. Throws ModelFileError on a missing
  // tensor or a shape that contradicts config.json.
  static Gpt2Model load(const ModelFiles& files);

  const Gpt2Config& config() const;

  // Recompute (the article's use_cache=False): ids [T] -> logits [T, V] for every position.
  torch::Tensor forward(const std::vector<int64_t>& ids) const;

  // KV cache: feeds new_ids [N] after cache.length earlier tokens, appends their keys/values,
  // returns logits [N, V]. Same numbers as forward() on the whole sequence, to float tolerance.
  torch::Tensor forward_cached(KvCache& cache, const std::vector<int64_t>& new_ids) const;

  // Both throw UsageError (one line, naming config.json) for an empty sequence, an id outside
  // [0, vocab_size), or more than n_positions tokens in all; the cache is then left unchanged.
  // Logits never require grad (the forward runs under torch::NoGradGuard).

 private:
  // One transformer block's weights, named as in the checkpoint (h.{i}.*). Conv1D weights are
  // [in, out], as stored.
  struct Block {
    torch::Tensor ln_1_weight, ln_1_bias;                // [C]
    torch::Tensor attn_c_attn_weight, attn_c_attn_bias;  // [C, 3C], [3C]
    torch::Tensor attn_c_proj_weight, attn_c_proj_bias;  // [C, C], [C]
    torch::Tensor ln_2_weight, ln_2_bias;                // [C]
    torch::Tensor mlp_c_fc_weight, mlp_c_fc_bias;        // [C, 4C], [4C]
    torch::Tensor mlp_c_proj_weight, mlp_c_proj_bias;    // [4C, C], [C]
  };

  Gpt2Model() = default;

  // Throws UsageError for an empty sequence, an id outside [0, V), or past_length + N > n_positions.
  void check_ids(const std::vector<int64_t>& ids, int64_t past_length) const;

  // The whole network on new ids at positions past_length.. ; with `cache`, attends to the cached
  // keys/values and appends the new ones. Returns logits [N, V].
  torch::Tensor run(const std::vector<int64_t>& ids, KvCache* cache) const;
  torch::Tensor attention(const Block& b, const torch::Tensor& x, int64_t layer, KvCache* cache) const;
  torch::Tensor mlp(const Block& b, const torch::Tensor& x) const;
  torch::Tensor activation(const torch::Tensor& x) const;

  Gpt2Config config_;
  std::string config_path_;  // named in errors about ids and context
  torch::Tensor wte_;  // [V, C]; also lm_head (tied)
  torch::Tensor wpe_;  // [n_positions, C]
  std::vector<Block> h_;
  torch::Tensor ln_f_weight_, ln_f_bias_;  // [C]
};

}  // namespace genrepro
