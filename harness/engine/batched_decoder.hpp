#pragma once
// Lock-step batched decoding (docs/numerics.md): the runs that use the KV cache advance together,
// one token per step. Each step is one forward pass over every active run's new token
// (Gpt2Model::forward_step); each run keeps its own cache, sampler chain, generator and record
// (GenerationRun), so a run's evidence is what it would be alone whenever the layout is proven
// (engine/numerics_probe.hpp). Finished runs leave the batch and waiting runs join it, so it
// stays full. Each distinct prompt is prefilled once; its runs start from copies of that cache.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "engine/generation_loop.hpp"
#include "engine/linear_layout.hpp"
#include "strict/strict_gpt2.hpp"

namespace genrepro {

class Gpt2Model;  // engine/gpt2_model.hpp (libtorch)

struct DecodeJob {
  const std::vector<int64_t>* prompt_ids = nullptr;
  const RunParams* params = nullptr;  // params->use_cache; checked (check_run_params)
  TokenObserver on_token;             // optional: every new token as it is picked (streaming)
  std::string label;                  // optional: the run's id, put before a NumericsError's step
};

struct BatchSettings {
  int64_t batch = 1;          // runs decoded together
  LinearLayout layout;        // the linear layers' numerics
  int prefill_blas_threads = 1;  // BLAS threads of every prefill (the one-run path's)
  int decode_blas_threads = 1;   // BLAS threads of the batched steps
  int sampler_threads = 1;       // threads sharing the batch's sampler chains and records
};

// Decodes jobs[k] for every k that next_job() hands out (std::nullopt: none left), calling
// finished(k, result) for each as it ends. Several workers may share one next_job (it must be
// thread-safe) when their layout's bits do not depend on the batch (tiles, one BLAS thread).
void decode_batched(const Gpt2Model& model, const std::vector<DecodeJob>& jobs, const BatchSettings& settings,
                    const std::function<std::optional<size_t>()>& next_job, const TokenText& token_text,
                    const std::function<void(size_t, GenerationResult)>& finished);

// The same in strict numerics (strict/strict_gpt2.hpp): `batch` runs decoded together on `team`'s
// threads, which also share the runs' sampling. A run's bits do not depend on the batch, the team
// or the runs beside it, so there is nothing to prove or pin.
void decode_batched(const strict::StrictGpt2& model, const std::vector<DecodeJob>& jobs, int64_t batch,
                    strict::ThreadTeam& team, const std::function<std::optional<size_t>()>& next_job,
                    const TokenText& token_text, const std::function<void(size_t, GenerationResult)>& finished);

}  // namespace genrepro
