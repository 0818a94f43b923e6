#include "engine/batched_decoder.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "evidence/environment.hpp"
#include "util/errors.hpp"
#include "util/index_pool.hpp"

namespace genrepro {

namespace {

// A prompt's keys and values after its prefill, and the logits of its last position.
struct Prefill {
  KvCache cache;
  torch::Tensor logits;  // [V]
};

// One active run: the loop's state, its own cache, and the logits it consumes next.
struct Slot {
  size_t job = 0;
  std::unique_ptr<GenerationRun> run;
  KvCache cache;
  torch::Tensor logits;  // [V]
};

int64_t tokens_needed(const DecodeJob& job, int64_t n_positions) {
  return std::min<int64_t>(static_cast<int64_t>(job.prompt_ids->size()) + job.params->max_new_tokens, n_positions);
}

class BatchedDecoder {
 public:
  BatchedDecoder(const Gpt2Model& model, const std::vector<DecodeJob>& jobs, const BatchSettings& settings,
                 const TokenText& token_text)
      : model_(model), jobs_(jobs), settings_(settings), token_text_(token_text) {}

  void decode(const std::function<std::optional<size_t>()>& next_job,
              const std::function<void(size_t, GenerationResult)>& finished) {
    bool more = true;
    while (true) {
      while (more && static_cast<int64_t>(active_.size()) < settings_.batch) {
        const std::optional<size_t> k = next_job();
        if (!k) {
          more = false;
          break;
        }
        join(*k, finished);
      }
      // logits -> sampler chain -> pick -> record -> stop? for every active run. Runs share
      // nothing here, so the cores the BLAS used for the step take a share of the runs each.
      for_each_index(active_.size(), settings_.sampler_threads,
                     [&](size_t b) { advance(active_[b]); });
      leave_finished(finished);
      if (active_.empty()) {
        if (!more) return;
        continue;
      }
      step();
    }
  }

 private:
  // A new run: a copy of its prompt's prefill, whose last logits it consumes first.
  void join(size_t k, const std::function<void(size_t, GenerationResult)>& finished) {
    const DecodeJob& job = jobs_[k];
    auto run = std::make_unique<GenerationRun>(*job.prompt_ids, *job.params, model_.config().eos_token_id,
                                               model_.config().n_positions, token_text_, job.on_token);
    if (run->finished()) {  // nothing to compute (no token asked for)
      finished(k, run->take_result());
      return;
    }
    const Prefill& prefill = prefill_of(*job.prompt_ids);
    Slot slot;
    slot.job = k;
    slot.run = std::move(run);
    slot.cache = model_.copy_cache(prefill.cache, tokens_needed(job, model_.config().n_positions));
    slot.logits = prefill.logits;
    active_.push_back(std::move(slot));
  }

  // The prefill is the one-run path's, on its BLAS threads, whatever the batch uses.
  const Prefill& prefill_of(const std::vector<int64_t>& prompt) {
    auto it = prefills_.find(prompt);
    if (it != prefills_.end()) return it->second;
    set_blas_threads(settings_.prefill_blas_threads);
    Prefill p;
    p.cache = model_.make_cache(static_cast<int64_t>(prompt.size()));
    p.logits = model_.forward_cached(p.cache, prompt, settings_.layout).select(0, -1).clone();
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
    std::vector<KvCache*> caches;
    std::vector<int64_t> ids;
    for (Slot& slot : active_) {
      caches.push_back(&slot.cache);
      ids.push_back(slot.run->ids().back());
    }
    set_blas_threads(settings_.decode_blas_threads);
    const torch::Tensor logits = model_.forward_step(caches, ids, settings_.layout);  // [B, V]
    for (size_t b = 0; b < active_.size(); ++b) active_[b].logits = logits[static_cast<int64_t>(b)].clone();
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

  const Gpt2Model& model_;
  const std::vector<DecodeJob>& jobs_;
  BatchSettings settings_;
  const TokenText& token_text_;
  std::vector<Slot> active_;
  std::map<std::vector<int64_t>, Prefill> prefills_;
};

}  // namespace

void decode_batched(const Gpt2Model& model, const std::vector<DecodeJob>& jobs, const BatchSettings& settings,
                    const std::function<std::optional<size_t>()>& next_job, const TokenText& token_text,
                    const std::function<void(size_t, GenerationResult)>& finished) {
  BatchedDecoder decoder(model, jobs, settings, token_text);
  decoder.decode(next_job, finished);
}

}  // namespace genrepro
