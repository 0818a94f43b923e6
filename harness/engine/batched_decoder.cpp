#include "engine/batched_decoder.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "evidence/environment.hpp"
#if GENREPRO_WITH_LIBTORCH
#include "engine/gpt2_model.hpp"
#include "engine/torch_row_math.hpp"
#endif
#include "strict/thread_team.hpp"
#include "util/errors.hpp"
#include "util/index_pool.hpp"

namespace genrepro {

namespace {

int64_t tokens_needed(const DecodeJob& job, int64_t n_positions) {
  return std::min<int64_t>(static_cast<int64_t>(job.prompt_ids->size()) + job.params->max_new_tokens, n_positions);
}

// `from`'s tokens into `to` (room for at least as many), in StrictCache's layout
// [n_head][capacity][head_dim] per layer.
void copy_strict_cache(const strict::StrictCache& from, strict::StrictCache& to, const Gpt2Config& config) {
  const int64_t n_head = config.n_head;
  const size_t head_dim = static_cast<size_t>(config.head_dim());
  for (size_t layer = 0; layer < from.keys.size(); ++layer) {
    for (const auto member : {&strict::StrictCache::keys, &strict::StrictCache::values}) {
      const std::vector<float>& src = (from.*member)[layer];
      std::vector<float>& dst = (to.*member)[layer];
      const size_t used = static_cast<size_t>(from.length) * head_dim;
      for (int64_t h = 0; h < n_head; ++h)
        std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(h * from.capacity) * head_dim), used,
                    dst.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(h * to.capacity) * head_dim));
    }
  }
  to.length = from.length;
}

// What the decoder asks of a model, so that one loop of join, advance, leave and step serves
// libtorch's forward (reference, tiled) and genrepro's own (strict).
//   Cache                                   one sequence's keys and values
//   math()                                  the step math of its numerics
//   config()                                eos_token_id, n_positions
//   prefill(prompt, logits) -> Cache        the prompt's cache; logits of its last position
//   copy(cache, capacity) -> Cache          a run's own cache, starting from a prefill
//   step(caches, ids, logits)               one token for each sequence; logits[b] its row

#if GENREPRO_WITH_LIBTORCH
// libtorch's Gpt2Model in the layout and BLAS threads of `settings`.
class TorchBackend {
 public:
  using Cache = KvCache;
  TorchBackend(const Gpt2Model& model, const BatchSettings& settings) : model_(model), settings_(settings) {}
  const StepMath& math() const { return torch_step_math(); }
  const Gpt2Config& config() const { return model_.config(); }
  // The prefill is the one-run path's, on its BLAS threads, whatever the batch uses.
  KvCache prefill(const std::vector<int64_t>& prompt, std::vector<float>& logits) const {
    set_blas_threads(settings_.prefill_blas_threads);
    KvCache cache = model_.make_cache(static_cast<int64_t>(prompt.size()));
    logits = logits_row(model_.forward_cached(cache, prompt, settings_.layout), -1);
    return cache;
  }
  KvCache copy(const KvCache& cache, int64_t capacity) const { return model_.copy_cache(cache, capacity); }
  void step(const std::vector<KvCache*>& caches, const std::vector<int64_t>& ids,
            const std::vector<std::vector<float>*>& logits) const {
    set_blas_threads(settings_.decode_blas_threads);
    const torch::Tensor rows = model_.forward_step(caches, ids, settings_.layout);  // [B, V]
    for (size_t b = 0; b < caches.size(); ++b) *logits[b] = logits_row(rows, static_cast<int64_t>(b));
  }

 private:
  const Gpt2Model& model_;
  BatchSettings settings_;
};
#endif  // GENREPRO_WITH_LIBTORCH

// genrepro's own forward: every row's bits are its own whatever the batch, so nothing to set.
class StrictBackend {
 public:
  using Cache = strict::StrictCache;
  StrictBackend(const strict::StrictGpt2& model, strict::ThreadTeam& team) : model_(model), team_(team) {}
  const StepMath& math() const { return strict_step_math(); }
  const Gpt2Config& config() const { return model_.config(); }
  Cache prefill(const std::vector<int64_t>& prompt, std::vector<float>& logits) const {
    Cache cache = model_.make_cache(static_cast<int64_t>(prompt.size()));
    logits.resize(static_cast<size_t>(model_.logits_size()));
    model_.forward({&cache}, {prompt}, logits.data(), team_);
    return cache;
  }
  Cache copy(const Cache& cache, int64_t capacity) const {
    Cache out = model_.make_cache(std::max(capacity, cache.length));
    copy_strict_cache(cache, out, model_.config());
    return out;
  }
  void step(const std::vector<Cache*>& caches, const std::vector<int64_t>& ids,
            const std::vector<std::vector<float>*>& logits) const {
    const size_t width = static_cast<size_t>(model_.logits_size());
    rows_.resize(caches.size() * width);
    std::vector<std::vector<int64_t>> new_ids;
    for (int64_t id : ids) new_ids.push_back({id});
    model_.forward(caches, new_ids, rows_.data(), team_);
    for (size_t b = 0; b < caches.size(); ++b)
      logits[b]->assign(rows_.begin() + static_cast<std::ptrdiff_t>(b * width),
                        rows_.begin() + static_cast<std::ptrdiff_t>((b + 1) * width));
  }

 private:
  const strict::StrictGpt2& model_;
  strict::ThreadTeam& team_;
  mutable std::vector<float> rows_;  // [B, V] of the last step
};

template <class Backend>
class BatchedDecoder {
 public:
  using Cache = typename Backend::Cache;

  BatchedDecoder(const Backend& backend, const std::vector<DecodeJob>& jobs, int64_t batch, int sampler_threads,
                 const TokenText& token_text)
      : backend_(backend), jobs_(jobs), batch_(batch), sampler_threads_(sampler_threads), token_text_(token_text) {}

  void decode(const std::function<std::optional<size_t>()>& next_job,
              const std::function<void(size_t, GenerationResult)>& finished) {
    bool more = true;
    while (true) {
      while (more && static_cast<int64_t>(active_.size()) < batch_) {
        const std::optional<size_t> k = next_job();
        if (!k) {
          more = false;
          break;
        }
        join(*k, finished);
      }
      // logits -> sampler chain -> pick -> record -> stop? for every active run. Runs share
      // nothing here, so the cores the forward used for the step take a share of the runs each.
      for_each_index(active_.size(), sampler_threads_, [&](size_t b) { advance(active_[b]); });
      leave_finished(finished);
      if (active_.empty()) {
        if (!more) return;
        continue;
      }
      step();
    }
  }

 private:
  // A prompt's keys and values after its prefill, and the logits of its last position.
  struct Prefill {
    Cache cache;
    std::vector<float> logits;  // [V]
  };

  // One active run: the loop's state, its own cache, and the logits it consumes next.
  struct Slot {
    size_t job = 0;
    std::unique_ptr<GenerationRun> run;
    Cache cache;
    std::vector<float> logits;  // [V]
  };

  // A new run: a copy of its prompt's prefill, whose last logits it consumes first.
  void join(size_t k, const std::function<void(size_t, GenerationResult)>& finished) {
    const DecodeJob& job = jobs_[k];
    const Gpt2Config& config = backend_.config();
    auto run = std::make_unique<GenerationRun>(*job.prompt_ids, *job.params, config.eos_token_id, config.n_positions,
                                               backend_.math(), token_text_, job.on_token);
    if (run->finished()) {  // nothing to compute (no token asked for)
      finished(k, run->take_result());
      return;
    }
    const Prefill& prefill = prefill_of(*job.prompt_ids);
    Slot slot;
    slot.job = k;
    slot.run = std::move(run);
    slot.cache = backend_.copy(prefill.cache, tokens_needed(job, config.n_positions));
    slot.logits = prefill.logits;
    active_.push_back(std::move(slot));
  }

  const Prefill& prefill_of(const std::vector<int64_t>& prompt) {
    auto it = prefills_.find(prompt);
    if (it != prefills_.end()) return it->second;
    Prefill p;
    p.cache = backend_.prefill(prompt, p.logits);
    // Runs copy the cache they start from, so dropping every kept prefill is always safe.
    if (prefills_.size() >= kMaxKeptPrefills) prefills_.clear();
    return prefills_.emplace(prompt, std::move(p)).first->second;
  }

  void leave_finished(const std::function<void(size_t, GenerationResult)>& finished) {
    for (Slot& slot : active_)
      if (slot.run->finished()) finished(slot.job, slot.run->take_result());
    active_.erase(std::remove_if(active_.begin(), active_.end(), [](const Slot& s) { return s.run->finished(); }),
                  active_.end());
  }

  // One token for every active run, in one forward pass.
  void step() {
    std::vector<Cache*> caches;
    std::vector<int64_t> ids;
    std::vector<std::vector<float>*> logits;
    for (Slot& slot : active_) {
      caches.push_back(&slot.cache);
      ids.push_back(slot.run->ids().back());
      logits.push_back(&slot.logits);
    }
    backend_.step(caches, ids, logits);
  }

  // The run's id before the step, so a stopped grid names the run that stopped it.
  void advance(Slot& slot) {
    try {
      slot.run->advance(slot.logits);
    } catch (const NumericsError& e) {
      const std::string& label = jobs_[slot.job].label;
      if (label.empty()) throw;
      throw NumericsError("run " + label + ": " + e.what());
    }
  }

  // Prompts are few in a grid; the bound only keeps a pathological one (every run its own
  // prompt) from holding every prefill at once.
  static constexpr size_t kMaxKeptPrefills = 64;

  const Backend& backend_;
  const std::vector<DecodeJob>& jobs_;
  int64_t batch_;
  int sampler_threads_;
  const TokenText& token_text_;
  std::vector<Slot> active_;
  std::map<std::vector<int64_t>, Prefill> prefills_;
};

}  // namespace

#if GENREPRO_WITH_LIBTORCH
void decode_batched(const Gpt2Model& model, const std::vector<DecodeJob>& jobs, const BatchSettings& settings,
                    const std::function<std::optional<size_t>()>& next_job, const TokenText& token_text,
                    const std::function<void(size_t, GenerationResult)>& finished) {
  const TorchBackend backend(model, settings);
  BatchedDecoder<TorchBackend> decoder(backend, jobs, settings.batch, settings.sampler_threads, token_text);
  decoder.decode(next_job, finished);
}
#endif  // GENREPRO_WITH_LIBTORCH

void decode_batched(const strict::StrictGpt2& model, const std::vector<DecodeJob>& jobs, int64_t batch,
                    strict::ThreadTeam& team, const std::function<std::optional<size_t>()>& next_job,
                    const TokenText& token_text, const std::function<void(size_t, GenerationResult)>& finished) {
  const StrictBackend backend(model, team);
  BatchedDecoder<StrictBackend> decoder(backend, jobs, batch, team.size(), token_text);
  decoder.decode(next_job, finished);
}

}  // namespace genrepro
