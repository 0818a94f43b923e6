#pragma once
// GPT-2 forward pass in libtorch, float32 on CPU, following Hugging Face's eager GPT2LMHeadModel
// step by step. Tensor names are the checkpoint's (wte, wpe, h.{i}.ln_1, h.{i}.attn.c_attn, ...).
#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "engine/linear_layout.hpp"
#include "model/model_config.hpp"
#include "model/model_files.hpp"

namespace genrepro {

// Keys and values of every layer for the tokens seen so far. Each layer's tensor is allocated
// once for `capacity` tokens, [n_head, capacity, head_dim], and the first `length` positions hold
// data: attention reads a view of them, so no step copies the cache (HF's torch.cat does, and
// gives the same bits: tests/unit/engine/batched_decoder_test.cpp). A cache that runs out of room
// grows to the needed size, so capacity is only a hint (Gpt2Model::make_cache).
struct KvCache {
  std::vector<torch::Tensor> keys;
  std::vector<torch::Tensor> values;
  int64_t length = 0;    // tokens already in the cache
  int64_t capacity = 0;  // tokens the tensors have room for
};

// Conv1D (addmm(bias, x, W), W [in, out]) or, without a bias, the tied head (linear(x, wte),
// wte [out, in]) over the rows of x [N, in], in `layout` -> [N, out].
torch::Tensor linear_rows(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor* bias,
                          const LinearLayout& layout);

// One kind of linear layer as the forward pass calls it (what the numerics probe measures).
struct LinearOp {
  std::string name;      // c_attn, attn_c_proj, c_fc, mlp_c_proj, lm_head
  torch::Tensor weight;  // as stored
  torch::Tensor bias;    // undefined for lm_head
  torch::Tensor operator()(const torch::Tensor& x, const LinearLayout& layout) const {
    return linear_rows(x, weight, bias.defined() ? &bias : nullptr, layout);
  }
  int64_t in_features() const { return bias.defined() ? weight.size(0) : weight.size(1); }
};

// Row `row` of logits [N, V] (a negative row counts from the end) as the loop's plain float32 row.
std::vector<float> logits_row(const torch::Tensor& logits, int64_t row);

class Gpt2Model {
 public:
  // Loads config.json and model.safetensors; tensor names with or without the "transformer."
  // prefix; skips h.N.attn.bias / h.N.attn.masked_bias. Throws ModelFileError on a missing
  // tensor or a shape that contradicts config.json. `decodable_ids`: the tokenizer's id count
  // (check_vocabularies, plan/run_plan.hpp); with a padded vocab_size above it (nanoGPT's 50304
  // for 50257 tokens) the head computes only the logits of ids the tokenizer can decode, so a
  // padded id is never picked nor counted in a softmax (docs/validation.md). 0: every id.
  static Gpt2Model load(const ModelFiles& files, int64_t decodable_ids = 0);

  const Gpt2Config& config() const;

  // Every shape of linear layer the forward pass multiplies by: layer 0's four and the head.
  std::vector<LinearOp> linear_ops() const;

  // A copy of `cache` with room for `capacity` tokens (a run starting from a shared prefill).
  KvCache copy_cache(const KvCache& cache, int64_t capacity) const;

  // Recompute (the article's use_cache=False): ids [T] -> logits [T, V] for every position.
  torch::Tensor forward(const std::vector<int64_t>& ids, const LinearLayout& layout = {}) const;

  // An empty cache with room for `capacity` tokens (at most n_positions) allocated up front.
  KvCache make_cache(int64_t capacity) const;

  // KV cache: feeds new_ids [N] after cache.length earlier tokens, appends their keys/values,
  // returns logits [N, V]. Same numbers as forward() on the whole sequence, to float tolerance.
  // `cache` is empty (KvCache{} or make_cache) or was filled by this model.
  torch::Tensor forward_cached(KvCache& cache, const std::vector<int64_t>& new_ids,
                               const LinearLayout& layout = {}) const;

  // One decoding step of B sequences at once: ids[b] follows what caches[b] holds. The linear
  // layers, layer norms and activations see the B rows as one matrix; attention runs per
  // sequence on its own cache. Returns logits [B, V]; row b has the bits forward_cached(*caches[b],
  // {ids[b]}) gives, when `layout` is one the numerics probe proved (engine/numerics_probe.hpp).
  torch::Tensor forward_step(const std::vector<KvCache*>& caches, const std::vector<int64_t>& ids,
                             const LinearLayout& layout = {}) const;

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

  // Consecutive rows of one forward call that belong to one sequence: rows [begin, begin + count)
  // at positions past.. ; with `cache`, they attend to its keys/values and append theirs.
  struct Segment {
    int64_t begin = 0;
    int64_t count = 0;
    int64_t past = 0;
    KvCache* cache = nullptr;
  };

  // The whole network on `ids` (the rows of every segment, in order). Returns logits [N, V].
  torch::Tensor run(const std::vector<int64_t>& ids, const std::vector<Segment>& segments,
                    const LinearLayout& layout) const;
  torch::Tensor attention(const Block& b, const torch::Tensor& x, int64_t layer,
                          const std::vector<Segment>& segments, const LinearLayout& layout) const;
  torch::Tensor attend(const torch::Tensor& qkv, int64_t layer, const Segment& segment) const;
  torch::Tensor mlp(const Block& b, const torch::Tensor& x, const LinearLayout& layout) const;
  void ensure_room(KvCache& cache, int64_t tokens) const;
  torch::Tensor activation(const torch::Tensor& x) const;

  Gpt2Config config_;
  std::string config_path_;  // named in errors about ids and context
  torch::Tensor wte_;      // [V, C]; also lm_head (tied)
  torch::Tensor lm_head_;  // wte_'s first rows: the decodable ids (all V unless the vocab is padded)
  torch::Tensor wpe_;  // [n_positions, C]
  std::vector<Block> h_;
  torch::Tensor ln_f_weight_, ln_f_bias_;  // [C]
};

}  // namespace genrepro
