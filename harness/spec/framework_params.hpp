#pragma once
// The frameworks' decoding controls (issue 23, docs/sampling.md): which keys each framework has,
// their defaults (the presets "framework": "hf" | "llama.cpp"), the values each accepts, and how
// they are written in experiment files, flags and evidence. No libtorch.
//
// A run of framework hf or llama.cpp starts from that framework's defaults (resolve_framework);
// the keys the user gives override them; the evidence records every value, resolved, so the run id
// never depends on a default. An article run (the default) writes none of these keys: its params,
// and so every existing run id, are unchanged.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/run_params.hpp"
#include "spec/sampling_params.hpp"

namespace genrepro {

// "article" | "hf" | "llama.cpp", and the names as a list for messages.
const std::vector<std::string>& framework_names();
Checked<Framework> check_framework(const std::string& name);

// The full chain of a framework, in its order:
//   hf: sequence_bias, repetition_penalty, no_repeat_ngram_size, bad_words_ids, min_length,
//       min_new_tokens, suppress_tokens (the logits processors, _get_logits_processor's order),
//       then temperature, top_k, top_p, min_p, typical_p, epsilon_cutoff, eta_cutoff (the warpers,
//       sampling only). Fixed: Hugging Face has no way to reorder them.
//   llama.cpp: logit_bias, penalties, top_n_sigma, top_k, typical_p, top_p, min_p, temperature,
//       dist (common/sampling.cpp's chain for the default --samplers; DRY and XTC left out).
//       The seven between logit_bias and dist may be reordered (llama.cpp's --samplers).
const std::vector<SamplerStage>& framework_order(Framework f);
// The stages of llama.cpp's chain a sampler_order may reorder (the seven above), as names.
const std::vector<std::string>& llama_cpp_orderable_names();

// Sets every sampling value but mode and seed to framework `f`'s defaults (docs/sampling.md,
// "Presets"): hf = GenerationConfig's (temperature 1, top_k 50, top_p 1, the rest off, rng torch);
// llama.cpp = common_params_sampling's (temp 0.8, top_k 40, top_p 0.95, min_p 0.05, typical_p 1,
// repeat_last_n 64, repeat_penalty 1, ..., rng llama.cpp); a greedy llama.cpp run has temperature 0
// (llama.cpp's greedy: --temp 0). article: the article's (SamplingParams{}).
void resolve_framework(SamplingParams& s, Framework f);

// The keys of FrameworkControls, in the order evidence writes them, with the framework(s) that
// own each: shared (min_p, typical_p), hf's, llama.cpp's.
struct ControlKey {
  const char* key;
  bool hf;                // Hugging Face has it
  bool llama_cpp;         // llama.cpp has it
  bool sampling_only;     // means nothing in a greedy run (a warper, or a llama.cpp filter of the draw)
  bool list_valued;       // a list per run (never a grid axis)
};
const std::vector<ControlKey>& control_keys();
const ControlKey* find_control_key(const std::string& key);
bool framework_has(Framework f, const ControlKey& k);
// "Hugging Face's" / "llama.cpp's" / "Hugging Face's and llama.cpp's": for messages.
std::string owners_of(const ControlKey& k);

// What a control key accepts, in words (the same text every message uses).
std::string control_allowed(const std::string& key);

// Reads one control's JSON value into `c` (a type check only: ranges are check_run_params').
// Empty on success, else what is allowed (control_allowed).
std::optional<std::string> read_control(FrameworkControls& c, const std::string& key, const nlohmann::json& value);

// One control's value as evidence writes it (-infinity as "-Infinity").
nlohmann::ordered_json control_to_json(const FrameworkControls& c, const std::string& key);

// Every problem with the framework part of `p` (check_run_params appends them after its own):
// a control outside its range, a control another framework owns set to anything but "off", a
// top_p_rule / rng / sampler_order the framework does not have, a llama.cpp seed past uint32.
std::vector<ParamProblem> check_framework_params(const RunParams& p);

// The stages that run for `s` (a framework run), in order: the framework's order without the
// stages that are off (the ones Hugging Face would not add, llama.cpp's no-ops) and, when greedy
// for hf, without the warpers. These are the stages a step record lists.
std::vector<SamplerStage> active_stages(const SamplingParams& s, bool greedy);

}  // namespace genrepro

namespace genrepro {

// A stage name of framework `f`'s chain (framework_order), or empty.
std::optional<SamplerStage> parse_stage_of(Framework f, const std::string& name);

// A sampler_order as written for framework `f`, in full: article's names as ever; llama.cpp's
// seven orderable stages (logit_bias and dist added at their places) or all nine; hf's fourteen.
// The problem names the first unknown or repeated name, or a wrong count.
Checked<std::vector<SamplerStage>> check_framework_order(Framework f, const std::vector<std::string>& names);

}  // namespace genrepro
