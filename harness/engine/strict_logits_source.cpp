// The loop's two ways to get logits (engine/logits_source.hpp) on genrepro's own forward.
#include <algorithm>

#include "engine/logits_source.hpp"
#include "strict/strict_gpt2.hpp"
#include "strict/thread_team.hpp"

namespace genrepro {

namespace {

// The article's use_cache=False: every step feeds the whole sequence to an empty cache.
class StrictRecomputeSource : public LogitsSource {
 public:
  StrictRecomputeSource(const strict::StrictGpt2& model, strict::ThreadTeam& team) : model_(model), team_(team) {}

  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    strict::StrictCache cache = model_.make_cache(static_cast<int64_t>(ids.size()));
    std::vector<float> logits(static_cast<size_t>(model_.logits_size()));
    model_.forward({&cache}, {ids}, logits.data(), team_);
    return logits;
  }
  int64_t context_size() const override { return model_.config().n_positions; }
  const StepMath& step_math() const override { return strict_step_math(); }

 private:
  const strict::StrictGpt2& model_;
  strict::ThreadTeam& team_;
};

// Feeds only the tokens it has not seen; starts over when `ids` does not extend them.
class StrictCachedSource : public LogitsSource {
 public:
  StrictCachedSource(const strict::StrictGpt2& model, strict::ThreadTeam& team, int64_t reserve_tokens)
      : model_(model), team_(team), reserve_tokens_(reserve_tokens), cache_(empty_cache()) {}

  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    if (ids == fed_ && !last_logits_.empty()) return last_logits_;  // asked again for the same sequence
    if (!(ids.size() > fed_.size() && std::equal(fed_.begin(), fed_.end(), ids.begin()))) {
      cache_ = empty_cache();
      fed_.clear();
    }
    const std::vector<int64_t> new_ids(ids.begin() + static_cast<std::ptrdiff_t>(fed_.size()), ids.end());
    std::vector<float> logits(static_cast<size_t>(model_.logits_size()));
    try {
      model_.forward({&cache_}, {new_ids}, logits.data(), team_);
    } catch (...) {  // the forward leaves the cache unchanged; forget it all the same, as the torch source does
      cache_ = empty_cache();
      fed_.clear();
      last_logits_.clear();
      throw;
    }
    fed_ = ids;
    last_logits_ = std::move(logits);
    return last_logits_;
  }
  int64_t context_size() const override { return model_.config().n_positions; }
  const StepMath& step_math() const override { return strict_step_math(); }

 private:
  strict::StrictCache empty_cache() const { return model_.make_cache(std::max<int64_t>(reserve_tokens_, 1)); }

  const strict::StrictGpt2& model_;
  strict::ThreadTeam& team_;
  int64_t reserve_tokens_;
  strict::StrictCache cache_;
  std::vector<int64_t> fed_;
  std::vector<float> last_logits_;
};

}  // namespace

std::unique_ptr<LogitsSource> make_strict_recompute_source(const strict::StrictGpt2& model, strict::ThreadTeam& team) {
  return std::make_unique<StrictRecomputeSource>(model, team);
}

std::unique_ptr<LogitsSource> make_strict_cached_source(const strict::StrictGpt2& model, strict::ThreadTeam& team,
                                                        int64_t reserve_tokens) {
  return std::make_unique<StrictCachedSource>(model, team, reserve_tokens);
}

}  // namespace genrepro
