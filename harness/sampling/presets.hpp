#pragma once
// The three frameworks as presets of one chain (chain.hpp): which stages, in which order, with
// which rule, and which draw, from a checked SamplingParams (check_run_params; the framework's
// defaults already filled in by resolve_framework, as the experiment parser does):
//   article    sampler_order of temperature, top_k, top_p (top_p_rule article or hf), then the
//              race; greedy (mode greedy, or temperature 0): no stage, the argmax of the logits.
//   hf         Hugging Face's processors, then when sampling its warpers (active_stages: the ones
//              _get_logits_processor adds), then the race; greedy: the argmax after the processors.
//   llama.cpp  its samplers in sampler_order (active_stages: no-ops left out), then dist.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "params/run_params.hpp"
#include "sampling/chain.hpp"

namespace genrepro::sampling {

// Whether the preset takes the argmax instead of drawing: an article or hf run that is greedy as
// the engine reads it (mode greedy, or temperature 0). llama.cpp always draws (its temperature 0
// keeps one candidate, and dist still consumes its number).
bool picks_argmax(const SamplingParams& s);

// The preset's stages, in order, and its draw; make_chain puts them together. `math` (row_math.hpp)
// decides the bits of the softmaxes, sums and exponentials; it must outlive the chain.
std::vector<std::unique_ptr<Stage>> preset_stages(const SamplingParams& s);
std::unique_ptr<Draw> preset_draw(const SamplingParams& s, const RowMath& math = aten_float_math());
Chain make_chain(const SamplingParams& s, ChainStart start, const RowMath& math = aten_float_math());

// Whether a run's evidence lists each stage's kept-set count (steps[].stages): the frameworks'
// runs do; the article's evidence format predates the list and keeps its bytes.
bool records_stages(const SamplingParams& s);

// The first token id of a control list (suppress_tokens, bad_words_ids, sequence_bias, logit_bias)
// outside a vocabulary of `vocab` tokens, as "suppress_tokens holds token id 9"; empty when all
// are inside. The engine checks the same against the model's vocabulary.
std::optional<std::string> control_id_outside(const FrameworkControls& c, int64_t vocab);

}  // namespace genrepro::sampling
