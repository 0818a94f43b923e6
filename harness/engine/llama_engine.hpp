#pragma once
// Runs of the llama.cpp engine (params.engine): llama.cpp's forward on the model exported as
// GGUF, genrepro's loop and the run's framework chain on its logits, so the evidence has the
// same form as genrepro's own runs and diff can pair them (docs/engines.md).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/generation_loop.hpp"
#include "evidence/evidence.hpp"
#include "llama/llama_library.hpp"
#include "model/model_files.hpp"
#include "plan/run_plan.hpp"

namespace genrepro {

// What `run --engine llama.cpp` (or an experiment's "engine") needs: the library and settings.
struct LlamaRequest {
  std::string library;  // --llama-lib, else $GENREPRO_LLAMA_LIB; empty: none named
  llama::LlamaSettings settings;
};

class LlamaEngine {
 public:
  // Opens the library, exports the model to GGUF (once per model: kept in genrepro's cache dir
  // under the sources' digests, `model`'s files as describe_model hashed them) and loads it.
  // Throws UsageError when no library is named.
  static std::unique_ptr<LlamaEngine> load(const LlamaRequest& request, const ModelFiles& files, const ModelInfo& model);

  // llama.cpp must read a prompt as genrepro does, or the two engines would not run the same
  // input: throws Error naming `who` (a run id, --prompt) and both id lists otherwise.
  void check_prompt(const std::string& who, const std::string& text, const std::vector<int64_t>& ids) const;
  // check_prompt for every prompt of `plan`'s selected llama.cpp runs.
  void check_prompts(const RunPlan& plan) const;

  const LlamaCppRecord& record() const { return record_; }
  // One run, from a fresh cache; its use_cache keeps llama.cpp's KV cache between steps (else
  // every step decodes the whole sequence, the article's use_cache=False). Every pick is also
  // made by llama.cpp's own sampler chain on the same logits: a token they disagree on throws
  // Error naming `run_id` and the step.
  GenerationResult run(const std::string& run_id, const std::vector<int64_t>& prompt_ids, const RunParams& params,
                       int64_t eos_token_id, const TokenText& token_text, const TokenObserver& on_token = {});

 private:
  LlamaEngine() = default;
  std::shared_ptr<llama::LlamaLibrary> library_;
  std::unique_ptr<llama::LlamaModel> model_;
  std::unique_ptr<llama::LlamaSession> session_;
  LlamaCppRecord record_;
};

}  // namespace genrepro
