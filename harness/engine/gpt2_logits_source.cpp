// The two ways the loop can get logits from GPT-2: the article's use_cache=False (the whole
// sequence every step) and a KV cache (only the new token each step).
#include <algorithm>

#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "engine/torch_row_math.hpp"

namespace genrepro {

namespace {

// lm(ids, use_cache=False).logits[0, -1]: every step runs the whole sequence.
class RecomputeSource : public LogitsSource {
 public:
  RecomputeSource(const Gpt2Model& model, const LinearLayout& layout) : model_(model), layout_(layout) {}

  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    return logits_row(model_.forward(ids, layout_), -1);  // [T, V] -> [V]
  }

  int64_t context_size() const override { return model_.config().n_positions; }
  const StepMath& step_math() const override { return torch_step_math(); }

 private:
  const Gpt2Model& model_;
  LinearLayout layout_;
};

// Feeds only the tokens it has not seen. When `ids` is not an extension of what it has cached
// (a new prompt, or a caller that rewound), it starts over from an empty cache.
class CachedSource : public LogitsSource {
 public:
  CachedSource(const Gpt2Model& model, int64_t reserve_tokens, const LinearLayout& layout)
      : model_(model), reserve_tokens_(reserve_tokens), layout_(layout), cache_(empty_cache()) {}

  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    if (ids == fed_ && !last_logits_.empty()) {
      return last_logits_;  // asked again for the same sequence
    }
    if (!extends_fed(ids)) {
      cache_ = empty_cache();
      fed_.clear();
    }
    const std::vector<int64_t> new_ids(ids.begin() + static_cast<std::ptrdiff_t>(fed_.size()), ids.end());
    const torch::Tensor logits = feed(new_ids);   // [N, V]
    fed_ = ids;
    last_logits_ = logits_row(logits, -1);  // [V]
    return last_logits_;
  }

  int64_t context_size() const override { return model_.config().n_positions; }
  const StepMath& step_math() const override { return torch_step_math(); }

 private:
  bool extends_fed(const std::vector<int64_t>& ids) const {
    return ids.size() > fed_.size() && std::equal(fed_.begin(), fed_.end(), ids.begin());
  }

  // On an error (an id outside the vocabulary, past the context) forgets everything, so the
  // next call starts from a clean cache rather than a half-updated one.
  torch::Tensor feed(const std::vector<int64_t>& new_ids) {
    try {
      return model_.forward_cached(cache_, new_ids, layout_);
    } catch (...) {
      cache_ = empty_cache();
      fed_.clear();
      last_logits_.clear();
      throw;
    }
  }

  KvCache empty_cache() const { return reserve_tokens_ > 0 ? model_.make_cache(reserve_tokens_) : KvCache{}; }

  const Gpt2Model& model_;
  int64_t reserve_tokens_;
  LinearLayout layout_;
  KvCache cache_;
  std::vector<int64_t> fed_;   // the ids whose keys/values are in cache_
  std::vector<float> last_logits_;  // logits [V] after fed_
};

}  // namespace

std::unique_ptr<LogitsSource> make_recompute_source(const Gpt2Model& model) {
  return make_recompute_source(model, LinearLayout{});
}

std::unique_ptr<LogitsSource> make_recompute_source(const Gpt2Model& model, const LinearLayout& layout) {
  return std::make_unique<RecomputeSource>(model, layout);
}

std::unique_ptr<LogitsSource> make_cached_source(const Gpt2Model& model, int64_t reserve_tokens) {
  return make_cached_source(model, reserve_tokens, LinearLayout{});
}

std::unique_ptr<LogitsSource> make_cached_source(const Gpt2Model& model, int64_t reserve_tokens,
                                                 const LinearLayout& layout) {
  return std::make_unique<CachedSource>(model, reserve_tokens, layout);
}

}  // namespace genrepro
