#pragma once
// GPT-2's forward pass in genrepro's own float32 kernels ("strict" numerics, docs/numerics.md):
// every output of every layer is one fixed sequence of IEEE-754 operations set by the model's
// shapes alone, so its bits do not depend on the CPU, its vector width, the thread count, the batch
// or whether a sequence is fed whole (the article's use_cache=False) or a token at a time with a
// KV cache. No libtorch, no BLAS, no libm in the arithmetic.
//
// The operation order (kStrictKernelRevision names it; change it with the order):
//   embedding   x = wte[id] + wpe[pos]
//   linear      out[j] = fma chain over k = 0..K-1 from 0, then + bias[j]
//   layer norm  mean = fixed_sum(x) / C, var = fixed_sum((x - mean) * (x - mean)) / C (strict/fixed_math.hpp),
//               rstd = 1 / sqrt(var + eps), y = ((x - mean) * rstd) * w + b, unfused
//   attention   per head: s_t = dot(q, k_t) (fma chain over head_dim) / sqrt(head_dim) (if scale_attn_weights),
//               softmax over t = 0..pos: m = max, e_t = strict exp(s_t - m), p_t = e_t / fixed_sum(e),
//               out = fma chain over t of p_t * v_t
//   GELU        HF's gelu_new (tanh form) with strict tanh
//   residual    x = x + y
//   head        the tied wte as a linear without bias, only the decodable ids' rows
// The kernels (strict/kernel_set.hpp) that compute it are chosen once, at load: the fastest this
// CPU runs, or the one GENREPRO_STRICT_ISA names (plain, avx2, avx512, neon). They differ in speed
// only, so the choice is recorded, never compared.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "model/model_files.hpp"

namespace genrepro::strict {

// Recorded in evidence (numerics.kernel_revision); diff names a change of it as its own cause.
inline constexpr const char* kStrictKernelRevision = "strict-1";

class ThreadTeam;  // strict/thread_team.hpp

// Keys and values of one sequence, every layer, room for `capacity` tokens.
struct StrictCache {
  std::vector<std::vector<float>> keys;    // [layer] -> [n_head][capacity][head_dim]
  std::vector<std::vector<float>> values;  // same
  int64_t length = 0;
  int64_t capacity = 0;
};

class StrictGpt2 {
 public:
  // Reads config.json and model.safetensors (F32, F16 or BF16, upcast exactly), checks every tensor
  // against config.json (model/gpt2_tensors.hpp) and packs every weight once, in the layout the
  // kernels read. `decodable_ids` as Gpt2Model::load (engine/gpt2_model.hpp): 0 = every id.
  static StrictGpt2 load(const ModelFiles& files, int64_t decodable_ids = 0);
  // The same, packing on `team`'s threads (the weights are the same bytes on any team).
  static StrictGpt2 load(const ModelFiles& files, int64_t decodable_ids, ThreadTeam& team);

  const Gpt2Config& config() const;
  // Logits per sequence: the decodable ids (vocab_size unless the vocabulary is padded).
  int64_t logits_size() const;
  // An empty cache with room for `capacity` tokens (at most n_positions); grows when it must.
  StrictCache make_cache(int64_t capacity) const;

  // Feeds new_ids[b] (one id or more) after the caches[b]->length tokens it holds, appends their
  // keys and values, and writes the logits of sequence b's last new position to
  // logits[b * logits_size() .. (b + 1) * logits_size()). Throws UsageError (one line naming
  // config.json) for an empty id list, an id outside [0, vocab_size) or more than n_positions
  // tokens; the caches are then unchanged.
  void forward(const std::vector<StrictCache*>& caches, const std::vector<std::vector<int64_t>>& new_ids,
               float* logits, ThreadTeam& team) const;

  // The vector code this process runs ("avx512", "avx2", "neon", "plain"): recorded, never
  // compared, since every path computes the same operations.
  const char* kernel_isa() const;

  StrictGpt2(StrictGpt2&&) noexcept;
  StrictGpt2& operator=(StrictGpt2&&) noexcept;
  ~StrictGpt2();

 private:
  struct Weights;
  StrictGpt2();
  std::unique_ptr<Weights> w_;
};

}  // namespace genrepro::strict
