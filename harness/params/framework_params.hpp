#pragma once
// The frameworks' decoding controls (docs/sampling.md): which keys each framework has,
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

#include "params/param_table.hpp"
#include "params/run_params.hpp"
#include "params/sampling_params.hpp"

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

// The keys of FrameworkControls (params/param_table.hpp's control rows), in the order evidence
// writes them: shared (min_p, typical_p), hf's, llama.cpp's.
const std::vector<const ParamRow*>& control_keys();
const ParamRow* find_control_key(const std::string& key);
bool framework_has(Framework f, const ParamRow& k);
// "Hugging Face's" / "llama.cpp's" / "Hugging Face's and llama.cpp's": for messages.
std::string owners_of(const ParamRow& k);
// "hf" / "llama.cpp" / "hf or llama.cpp": the framework(s) a control needs, as a user writes them.
std::string frameworks_of(const ParamRow& k);

// What a control key accepts, in words (the same text every message uses).
std::string control_allowed(const std::string& key);

using ControlProblem = ValueProblem;

// Reads one control's JSON value into `c` (a type check only: ranges are check_run_params').
// In the four list controls a token (suppress_tokens, logit_bias) or a token sequence
// (bad_words_ids, sequence_bias) may be a non-empty string: it is kept in c.texts, unencoded,
// with a placeholder in its entry until encode_control_texts' ids replace it.
std::optional<ControlProblem> read_control(FrameworkControls& c, const std::string& key, const nlohmann::json& value);

// One control's value as evidence writes it (-infinity as "-Infinity"): ids, also where a text was
// given (a text not yet encoded, which only an unplanned spec holds, shows as its text).
nlohmann::ordered_json control_to_json(const FrameworkControls& c, const std::string& key);
// One control's value as the experiment file gave it: each text in place of the ids it became.
// The same as control_to_json for a control given no text.
nlohmann::ordered_json control_as_written(const FrameworkControls& c, const std::string& key);

// params.control_texts as evidence writes it: [{"control", "entry", "text", "ids"}, ...].
nlohmann::ordered_json control_texts_to_json(const std::vector<ControlText>& texts);
// The inverse (types only; control_texts_problem checks them against the controls). Empty on
// success, else the problem, its path starting at the list ("[0].entry: ...").
std::optional<std::string> read_control_texts(std::vector<ControlText>& out, const nlohmann::json& j);

// Whether c.texts says what the lists hold: each text of a list control of framework `f`,
// non-empty, encoded, in order (control_keys() order, then entry, spans not overlapping), and its
// ids the ones its entry holds (for logit_bias: ids.size() entries from `entry`, one bias). Empty
// when they are; else the index into c.texts and what is wrong.
struct ControlTextProblem {
  size_t index = 0;
  std::string problem;
};
std::optional<ControlTextProblem> control_texts_problem(const FrameworkControls& c, Framework f);

// How framework `f` encodes a control's text (docs/sampling.md, "Tokens given as text"):
//   hf: the recipe transformers documents for bad_words_ids and sequence_bias,
//       tokenizer(text, add_prefix_space=True, add_special_tokens=False).input_ids with
//       AutoTokenizer's GPT2TokenizerFast: a space before each part between special tokens that
//       does not start with one (tokenizers' ByteLevel), "<|endoftext|>" its id;
//   llama.cpp: its server's common_tokenize(vocab, text, add_special=false) (parse_special
//       false): the text as written, "<|endoftext|>" as ordinary text.
struct ControlTextRule {
  bool special_tokens = true;  // "<|endoftext|>" in the text is the special token's id
  bool prefix_space = false;   // add_prefix_space
  const char* name = "";       // for messages: "Hugging Face's rule (add_prefix_space=True)"
};
ControlTextRule control_text_rule(Framework f);

// Puts each text's ids (ids[i] for c.texts[i], every text unencoded, each list non-empty and
// one id long for suppress_tokens) into its entry; logit_bias's later entries move up by the
// extra tokens, and each text's `entry` with them.
void place_control_text_ids(FrameworkControls& c, const std::vector<std::vector<int64_t>>& ids);

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
