#pragma once
// Where the loop's logits come from. The loop does not care whether the model recomputes the
// whole sequence (the article's use_cache=False) or keeps a KV cache; tests use fakes.
#include <cstdint>
#include <memory>
#include <vector>

#include "sampling/step_math.hpp"

namespace genrepro {

namespace strict {
class StrictGpt2;
class ThreadTeam;
}  // namespace strict

class Gpt2Model;
struct LinearLayout;

class LogitsSource {
 public:
  virtual ~LogitsSource() = default;
  // Logits [V] (float32) for the token that follows `ids`, the whole sequence so far
  // (prompt + tokens generated). Called with a sequence one token longer each step.
  virtual std::vector<float> next_logits(const std::vector<int64_t>& ids) = 0;
  // The model's context (n_positions): the loop never feeds a longer sequence.
  virtual int64_t context_size() const = 0;
  // The step math of the numerics these logits have (sampling/step_math.hpp): a run samples and
  // records in the arithmetic its logits were computed in.
  virtual const StepMath& step_math() const = 0;
};

// `layout`: the numerics of the linear layers (engine/gpt2_model.hpp); the default is the
// reference one-run path.
std::unique_ptr<LogitsSource> make_recompute_source(const Gpt2Model& model);
std::unique_ptr<LogitsSource> make_recompute_source(const Gpt2Model& model, const LinearLayout& layout);
// `reserve_tokens`: the longest sequence expected (prompt + max_new_tokens), allocated up front;
// 0 lets the cache grow as needed. Either gives the same numbers.
std::unique_ptr<LogitsSource> make_cached_source(const Gpt2Model& model, int64_t reserve_tokens = 0);
std::unique_ptr<LogitsSource> make_cached_source(const Gpt2Model& model, int64_t reserve_tokens,
                                                 const LinearLayout& layout);

// Strict numerics (strict/strict_gpt2.hpp): the same two on genrepro's own forward, on `team`'s
// threads. Both give a run the same bits: the recompute's last row is computed by the operations
// the cache's step computes.
std::unique_ptr<LogitsSource> make_strict_recompute_source(const strict::StrictGpt2& model, strict::ThreadTeam& team);
std::unique_ptr<LogitsSource> make_strict_cached_source(const strict::StrictGpt2& model, strict::ThreadTeam& team,
                                                        int64_t reserve_tokens = 0);

}  // namespace genrepro
