#pragma once
// One stage of a sampler chain, modelled on llama.cpp's llama_sampler_i: a small struct with a name
// (which stage it is, SamplerStage), apply(candidates, context) over the plain float32 candidate
// array, and accept(token) for the history a stage keeps itself. Every framework's stages have this
// one interface; a chain (sampling/chain.hpp) is an ordered list of them and the three frameworks
// are three presets of it (sampling/presets.hpp). No libtorch.
#include <cstdint>
#include <string>
#include <vector>

#include "params/run_params.hpp"
#include "sampling/candidates.hpp"
#include "sampling/row_math.hpp"

namespace genrepro::sampling {

// What a stage may read besides the candidates: the sequence so far (Hugging Face's input_ids),
// where the prompt ends in it (min_new_tokens counts from there) and the end-of-text token
// (min_length, min_new_tokens, and the [eos] that bad_words_ids drops), and the row math the
// chain computes with (row_math.hpp).
struct StageContext {
  const std::vector<int64_t>& history;
  int64_t prompt_length = 0;
  int64_t eos_token_id = -1;
  const RowMath& math = aten_float_math();
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual SamplerStage stage() const = 0;
  std::string name() const { return to_string(stage()); }  // "temperature", "top_p", "penalties", ...
  // Rescales, masks (logit -infinity), shrinks or reorders `cur`; never adds a candidate.
  virtual void apply(Candidates& cur, const StageContext& context) = 0;
  // The token the chain picked (and, before the first step, each prompt token): llama.cpp's
  // llama_sampler_accept. Only stages that keep their own history (llama.cpp's penalties window)
  // do anything with it; Hugging Face's read the context's history instead, as they read input_ids.
  virtual void accept(int64_t token) { (void)token; }
  // Forgets every accepted token (Chain::restart).
  virtual void reset() {}
};

}  // namespace genrepro::sampling
