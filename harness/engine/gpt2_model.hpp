#pragma once
// GPT-2 forward pass in libtorch, float32 on CPU, following Hugging Face's eager GPT2LMHeadModel
// step by step. Tensor names are the checkpoint's (wte, wpe, h.{i}.ln_1, h.{i}.attn.c_attn, ...).
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "core/model_config.hpp"
#include "core/model_files.hpp"

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

  // (members chosen by the implementation)
};

}  // namespace genrepro
