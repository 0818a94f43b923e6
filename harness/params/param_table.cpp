#include "params/param_table.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "params/framework_params.hpp"
#include "params/number_text.hpp"
#include "params/sampling_params.hpp"
#include "util/joined.hpp"

namespace genrepro {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using Problem = std::optional<ValueProblem>;

// The whole value refused, in the row's words (the reader fills `allowed` from the row).
Problem refused(const json& v) { return ValueProblem{"", "", v, std::nullopt}; }
// A name refused with a name check's own words (check_top_p_rule, check_rng, ...).
Problem refused_name(const json& v, const ParamProblem& p) { return ValueProblem{p.allowed, "", v, p.value}; }

bool is_int64(const json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
}

Problem read_real(double& out, const json& v) {
  if (!v.is_number()) return refused(v);
  out = v.get<double>();
  return std::nullopt;
}
Problem read_integer(int64_t& out, const json& v) {
  if (!is_int64(v)) return refused(v);
  out = v.get<int64_t>();
  return std::nullopt;
}
Problem read_boolean(bool& out, const json& v) {
  if (!v.is_boolean()) return refused(v);
  out = v.get<bool>();
  return std::nullopt;
}

std::string one_of_names(const std::vector<std::string>& names) { return "one of {" + joined(names, ", ") + "}"; }

// A number in a run id: the shortest round-trip form without a trailing ".0".
std::string short_number(double v) {
  std::string s = json(v).dump();
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// A value as a person reads it: stage names joined by `stage_separator`, names bare, numbers in
// their shortest round-trip form, anything else as JSON.
std::string value_text(const ParamRow& row, const ordered_json& v, const char* stage_separator) {
  if (row.kind == ParamKind::stages) {
    std::string out;
    for (const auto& stage : v) out += (out.empty() ? "" : stage_separator) + stage.get<std::string>();
    return out;
  }
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return number_text(v.get<double>());
  return v.dump();
}

bool sampled(const RunParams& p) { return p.sampling.mode == DecodeMode::sample; }


// ----- the frameworks' scalar controls: one reader and writer for all, by member -----

template <double FrameworkControls::*M>
ordered_json control_real(const RunParams& p) {
  return p.sampling.controls.*M;
}
template <double FrameworkControls::*M>
Problem read_control_real(RunParams& p, const json& v) {
  return read_real(p.sampling.controls.*M, v);
}
template <int64_t FrameworkControls::*M>
ordered_json control_integer(const RunParams& p) {
  return p.sampling.controls.*M;
}
template <int64_t FrameworkControls::*M>
Problem read_control_integer(RunParams& p, const json& v) {
  return read_integer(p.sampling.controls.*M, v);
}

// A list control's reader and writer (framework_params.cpp holds the lists' texts and ids).
template <const char* Key>
ordered_json control_list(const RunParams& p) {
  return control_to_json(p.sampling.controls, Key);
}
template <const char* Key>
Problem read_control_list(RunParams& p, const json& v) {
  return read_control(p.sampling.controls, Key, v);
}

constexpr char kBadWordsIds[] = "bad_words_ids";
constexpr char kSequenceBias[] = "sequence_bias";
constexpr char kSuppressTokens[] = "suppress_tokens";
constexpr char kLogitBias[] = "logit_bias";

constexpr FlagOrigin kOurs = FlagOrigin::genrepro;
constexpr FlagOrigin kHf = FlagOrigin::hf;
constexpr FlagOrigin kLlama = FlagOrigin::llama_cpp;

std::vector<ParamRow> make_table() {
  std::vector<ParamRow> t;
  // ----- what every run has (the article's loop, and the frameworks' shared controls) -----
  t.push_back({"mode", ParamKind::mode, kEveryFramework, false, false, kShapesModel | kSetsSampler, nullptr,
               {{"--greedy", kOurs}, {"--do-sample", kHf}},
               "greedy (argmax) or sample; a sampling flag samples, --temperature 0 is greedy",
               [] { return std::string("\"greedy\" or \"sample\""); },
               [](const RunParams& p) -> ordered_json { return to_string(p.sampling.mode); },
               [](RunParams& p, const json& v) -> Problem {
                 if (v != "greedy" && v != "sample") return refused(v);
                 p.sampling.mode = v == "greedy" ? DecodeMode::greedy : DecodeMode::sample;
                 return std::nullopt;
               },
               nullptr});
  t.push_back({"temperature", ParamKind::real, kEveryFramework, true, false, kShapesModel | kSetsSampler, "T",
               {{"--temperature", kOurs}, {"--temp", kLlama}},
               "Divide logits by T >= 0 (0: greedy) [default 1 when sampling; llama.cpp 0.8]",
               [] { return std::string(temperature_allowed()); },
               [](const RunParams& p) -> ordered_json { return p.sampling.temperature; },
               [](RunParams& p, const json& v) { return read_real(p.sampling.temperature, v); },
               [](const RunParams& p) { return sampled(p) ? "-t" + short_number(p.sampling.temperature) : std::string(); },
               // NaN fails every comparison, so the rule is written as "is allowed".
               [](const RunParams& p) { return p.sampling.temperature == 0 || (p.sampling.temperature >= kMinTemperature && p.sampling.temperature <= kMaxTemperature); }});
  t.push_back({"top_k", ParamKind::integer, kEveryFramework, true, false, kSetsKept, "top_k",
               {{"--top-k", kOurs}},
               "Keep the k largest logits (0: off) [default 0; hf 50, llama.cpp 40]",
               [] { return std::string("an integer >= 0 (0 turns top-k off)"); },
               [](const RunParams& p) -> ordered_json { return p.sampling.top_k; },
               [](RunParams& p, const json& v) { return read_integer(p.sampling.top_k, v); },
               [](const RunParams& p) {
                 return sampled(p) && p.sampling.top_k > 0 ? "-k" + std::to_string(p.sampling.top_k) : std::string();
               },
               [](const RunParams& p) { return p.sampling.top_k >= 0; }});
  t.push_back({"top_p", ParamKind::real, kEveryFramework, true, false, kSetsKept, "top_p",
               {{"--top-p", kOurs}},
               "Nucleus: keep the smallest set reaching p, p in (0, 1] (1: off) [default 1; llama.cpp 0.95]",
               [] { return std::string("a number in (0, 1] (1 turns top-p off)"); },
               [](const RunParams& p) -> ordered_json { return p.sampling.top_p; },
               [](RunParams& p, const json& v) { return read_real(p.sampling.top_p, v); },
               [](const RunParams& p) {
                 return sampled(p) && p.sampling.top_p < 1.0 ? "-p" + short_number(p.sampling.top_p) : std::string();
               },
               // NaN fails every comparison, so the rule is written as "is allowed".
               [](const RunParams& p) { return p.sampling.top_p > 0 && p.sampling.top_p <= 1; }});
  t.push_back({"seed", ParamKind::seed, kEveryFramework, true, false, kSetsSampler, "seed",
               {{"--seed", kOurs}, {"-s", kLlama}},
               "Seed of the run's generator: an integer in [0, 2^64) [default 0]",
               [] { return std::string(seed_allowed()); },
               [](const RunParams& p) -> ordered_json { return p.sampling.seed; },
               [](RunParams& p, const json& v) -> Problem {
                 if (!v.is_number_unsigned()) return refused(v);
                 p.sampling.seed = v.get<uint64_t>();
                 return std::nullopt;
               },
               [](const RunParams& p) { return sampled(p) ? "-s" + std::to_string(p.sampling.seed) : std::string(); }});
  t.push_back({"sampler_order", ParamKind::stages, kEveryFramework, true, false, kSetsSampler, "order",
               {{"--sampler-order", kOurs}, {"--samplers", kLlama}},
               "Stages in order, comma-separated [default: the framework's order; the article's is\n"
               "temperature,top_k,top_p; llama.cpp's seven middle stages may be reordered]",
               // Said for every framework: an experiment's empty list is refused before its framework is read.
               [] {
                 return "a list of distinct stages from {" + joined(sampler_stage_names(), ", ") +
                        "} (framework article); framework llama.cpp: the seven stages {" + joined(llama_cpp_orderable_names(), ", ") +
                        "} in any order, each once; framework hf: its fixed order (leave sampler_order out)";
               },
               [](const RunParams& p) -> ordered_json { return stage_names(p.sampling.sampler_order); },
               [](RunParams& p, const json& v) -> Problem {
                 if (!v.is_array()) return refused(v);
                 std::vector<std::string> names;
                 for (size_t i = 0; i < v.size(); ++i) {
                   if (!v[i].is_string())
                     return ValueProblem{p.sampling.framework == Framework::article
                                             ? "a list of distinct stages from {" + joined(sampler_stage_names(), ", ") + "}"
                                             : "",
                                         "[" + std::to_string(i) + "]", v[i], std::nullopt};
                   names.push_back(v[i].get<std::string>());
                 }
                 const auto order = check_framework_order(p.sampling.framework, names);
                 if (order.problem) return refused_name(v, *order.problem);
                 p.sampling.sampler_order = *order.value;
                 return std::nullopt;
               },
               nullptr});
  t.push_back({"top_p_rule", ParamKind::name, kEveryFramework, true, false, kSetsSampler, "top_p_rule",
               {{"--top-p-rule", kOurs}},
               "article (the article's top_p_filter) | hf (Hugging Face's TopPLogitsWarper) [default article]",
               [] { return one_of_names(top_p_rule_names()); },
               [](const RunParams& p) -> ordered_json { return to_string(p.sampling.top_p_rule); },
               [](RunParams& p, const json& v) -> Problem {
                 if (!v.is_string()) return refused(v);
                 if (p.sampling.framework == Framework::llama_cpp && v == "llama.cpp") {
                   p.sampling.top_p_rule = TopPRule::llama_cpp;
                   return std::nullopt;
                 }
                 const auto rule = check_top_p_rule(v.get<std::string>());
                 if (rule.problem) return refused_name(v, *rule.problem);
                 p.sampling.top_p_rule = *rule.value;
                 return std::nullopt;
               },
               nullptr});
  t.push_back({"rng", ParamKind::name, kEveryFramework, true, false, kSetsSampler, "rng",
               {{"--rng", kOurs}},
               "torch (torch::multinomial, the article's draw) | portable (the same race over std::mt19937) [default torch]",
               [] { return one_of_names(rng_names()); },
               [](const RunParams& p) -> ordered_json { return to_string(p.sampling.rng); },
               [](RunParams& p, const json& v) -> Problem {
                 if (!v.is_string()) return refused(v);
                 if (p.sampling.framework == Framework::llama_cpp && v == "llama.cpp") {
                   p.sampling.rng = Rng::llama_cpp;
                   return std::nullopt;
                 }
                 const auto rng = check_rng(v.get<std::string>());
                 if (rng.problem) return refused_name(v, *rng.problem);
                 p.sampling.rng = *rng.value;
                 return std::nullopt;
               },
               nullptr});
  t.push_back({"max_new_tokens", ParamKind::integer, kEveryFramework, false, true, kSetsStop, "max",
               {{"--max-new-tokens", kOurs}, {"-n", kLlama}, {"--n-predict", kLlama}},
               "Cap on new tokens (0: only the first prediction)",
               [] { return std::string("an integer >= 0 (0 records only the first prediction)"); },
               [](const RunParams& p) -> ordered_json { return p.max_new_tokens; },
               [](RunParams& p, const json& v) { return read_integer(p.max_new_tokens, v); },
               nullptr,
               [](const RunParams& p) { return p.max_new_tokens >= 0; }});
  t.push_back({"stop_at_eos", ParamKind::boolean, kEveryFramework, false, true, kSetsStop, "eos-stop", {}, "",
               [] { return std::string("true or false"); },
               [](const RunParams& p) -> ordered_json { return p.stop_at_eos; },
               [](RunParams& p, const json& v) { return read_boolean(p.stop_at_eos, v); },
               nullptr});
  t.push_back({"use_cache", ParamKind::boolean, kEveryFramework, false, true, 0u, "cache", {}, "",
               [] { return std::string("true or false"); },
               [](const RunParams& p) -> ordered_json { return p.use_cache; },
               [](RunParams& p, const json& v) { return read_boolean(p.use_cache, v); },
               nullptr});
  t.push_back({"top_candidates", ParamKind::integer, kEveryFramework, false, false, kSetsListing, nullptr, {}, "",
               [] { return std::string("an integer >= 0"); },
               [](const RunParams& p) -> ordered_json { return p.top_candidates; },
               [](RunParams& p, const json& v) { return read_integer(p.top_candidates, v); },
               nullptr,
               [](const RunParams& p) { return p.top_candidates >= 0; }});
  t.push_back({"replica", ParamKind::copy, kEveryFramework, false, false, 0u, nullptr, {}, "",
               [] {
                 return "an integer from 1 to " + std::to_string(kMaxReplicas) +
                        " (identical copies of each run of the entry; not a list)";
               },
               [](const RunParams& p) -> ordered_json { return p.replica; },
               [](RunParams& p, const json& v) -> Problem {
                 if (!is_int64(v) || v.get<int64_t>() < 0 || v.get<int64_t>() >= kMaxReplicas) return refused(v);
                 p.replica = v.get<int64_t>();
                 return std::nullopt;
               },
               [](const RunParams& p) { return p.replica > 0 ? "-r" + std::to_string(p.replica) : std::string(); }});
  t.push_back({"framework", ParamKind::name, kEveryFramework, false, false, kSetsChain, nullptr,
               {{"--framework", kOurs}},
               "article | hf | llama.cpp: that framework's stages, rules, order, RNG and defaults\n"
               "(docs/sampling.md); the flags given override its defaults [default article]",
               [] { return one_of_names(framework_names()); },
               [](const RunParams& p) -> ordered_json { return to_string(p.sampling.framework); },
               [](RunParams& p, const json& v) -> Problem {
                 if (!v.is_string()) return refused(v);
                 const auto f = check_framework(v.get<std::string>());
                 if (f.problem) return refused_name(v, *f.problem);
                 resolve_framework(p.sampling, *f.value);
                 return std::nullopt;
               },
               // A framework run says whose controls it used first: "hf-sample-...", "llamacpp-greedy-...".
               [](const RunParams& p) {
                 switch (p.sampling.framework) {
                   case Framework::hf: return std::string("hf-");
                   case Framework::llama_cpp: return std::string("llamacpp-");
                   case Framework::article: break;
                 }
                 return std::string();
               }});

  // ----- the frameworks' own controls (docs/sampling.md has each one's exact rule) -----
  constexpr unsigned kBoth = kHfOnly | kLlamaCppOnly;
  t.push_back({"min_p", ParamKind::real, kBoth, true, false, kSetsChain, "min_p", {{"--min-p", kOurs}},
               "keep tokens with p >= min_p x the top p",
               [] { return std::string("a number in [0, 1] (0 turns min-p off)"); },
               control_real<&FrameworkControls::min_p>, read_control_real<&FrameworkControls::min_p>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.min_p >= 0 && c.min_p <= 1; }});
  t.push_back({"typical_p", ParamKind::real, kBoth, true, false, kSetsChain, "typical_p",
               {{"--typical-p", kOurs}, {"--typical", kLlama}}, "locally typical sampling's mass",
               [] { return std::string("a number in (0, 1] (1 turns typical sampling off)"); },
               control_real<&FrameworkControls::typical_p>, read_control_real<&FrameworkControls::typical_p>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.typical_p > 0 && c.typical_p <= 1; }});
  t.push_back({"repetition_penalty", ParamKind::real, kHfOnly, false, false, kSetsChain, "repetition_penalty",
               {{"--repetition-penalty", kOurs}}, "Hugging Face's RepetitionPenaltyLogitsProcessor",
               [] { return std::string("a number > 0 (1 turns it off)"); },
               control_real<&FrameworkControls::repetition_penalty>,
               read_control_real<&FrameworkControls::repetition_penalty>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.repetition_penalty > 0 && std::isfinite(c.repetition_penalty); }});
  t.push_back({"no_repeat_ngram_size", ParamKind::integer, kHfOnly, false, false, kSetsChain, "no_repeat_ngram_size",
               {{"--no-repeat-ngram-size", kOurs}}, "ban every n-gram that would repeat",
               [] { return std::string("an integer >= 0 (0 turns it off)"); },
               control_integer<&FrameworkControls::no_repeat_ngram_size>,
               read_control_integer<&FrameworkControls::no_repeat_ngram_size>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.no_repeat_ngram_size >= 0; }});
  t.push_back({"bad_words_ids", ParamKind::token_list, kHfOnly, false, false, kSetsChain, "bad_words_ids",
               {{"--bad-words-ids", kOurs}}, "token sequences never completed",
               [] {
                 return std::string(
                     "a list of non-empty lists of token ids or texts (a text is one sequence), e.g. [[1169], [7850, 3331], \"the cat\"]");
               },
               control_list<kBadWordsIds>, read_control_list<kBadWordsIds>, nullptr});
  t.push_back({"sequence_bias", ParamKind::token_list, kHfOnly, false, false, kSetsChain, "sequence_bias",
               {{"--sequence-bias", kOurs}}, "biases for tokens that complete a sequence",
               [] {
                 return std::string(
                     "a list of [token ids or text, bias] pairs, ids > 0, bias a finite number, e.g. [[[7850], -2.5], [\"the cat\", 1.0]]");
               },
               control_list<kSequenceBias>, read_control_list<kSequenceBias>, nullptr});
  t.push_back({"suppress_tokens", ParamKind::token_list, kHfOnly, false, false, kSetsChain, "suppress_tokens",
               {{"--suppress-tokens", kOurs}}, "tokens never picked",
               [] { return std::string("a list of token ids or texts of one token each, e.g. [50256, \" the\"]"); },
               control_list<kSuppressTokens>, read_control_list<kSuppressTokens>, nullptr});
  t.push_back({"min_new_tokens", ParamKind::integer, kHfOnly, false, false, kSetsChain, "min_new_tokens",
               {{"--min-new-tokens", kOurs}}, "EOS masked until this many new tokens",
               [] { return std::string("an integer >= 0 (0 turns it off)"); },
               control_integer<&FrameworkControls::min_new_tokens>,
               read_control_integer<&FrameworkControls::min_new_tokens>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.min_new_tokens >= 0; }});
  t.push_back({"min_length", ParamKind::integer, kHfOnly, false, false, kSetsChain, "min_length",
               {{"--min-length", kOurs}}, "EOS masked until the sequence, prompt included, is this long",
               [] { return std::string("an integer >= 0 (0 turns it off)"); },
               control_integer<&FrameworkControls::min_length>, read_control_integer<&FrameworkControls::min_length>,
               nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.min_length >= 0; }});
  t.push_back({"epsilon_cutoff", ParamKind::real, kHfOnly, true, false, kSetsChain, "epsilon_cutoff",
               {{"--epsilon-cutoff", kOurs}}, "drop tokens with p below epsilon",
               [] { return std::string("a number in [0, 1) (0 turns it off)"); },
               control_real<&FrameworkControls::epsilon_cutoff>, read_control_real<&FrameworkControls::epsilon_cutoff>,
               nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.epsilon_cutoff >= 0 && c.epsilon_cutoff < 1; }});
  t.push_back({"eta_cutoff", ParamKind::real, kHfOnly, true, false, kSetsChain, "eta_cutoff",
               {{"--eta-cutoff", kOurs}}, "eta sampling's cutoff",
               [] { return std::string("a number in [0, 1) (0 turns it off)"); },
               control_real<&FrameworkControls::eta_cutoff>, read_control_real<&FrameworkControls::eta_cutoff>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.eta_cutoff >= 0 && c.eta_cutoff < 1; }});
  t.push_back({"repeat_last_n", ParamKind::integer, kLlamaCppOnly, false, false, kSetsChain, "repeat_last_n",
               {{"--repeat-last-n", kOurs}}, "the penalties' window",
               [] { return std::string("an integer >= -1 (0 turns the penalties off, -1 is the whole context)"); },
               control_integer<&FrameworkControls::repeat_last_n>,
               read_control_integer<&FrameworkControls::repeat_last_n>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.repeat_last_n >= -1; }});
  t.push_back({"repeat_penalty", ParamKind::real, kLlamaCppOnly, false, false, kSetsChain, "repeat_penalty",
               {{"--repeat-penalty", kOurs}}, "llama.cpp's repetition penalty",
               [] { return std::string("a number > 0 whose inverse is finite (1 turns it off)"); },
               control_real<&FrameworkControls::repeat_penalty>, read_control_real<&FrameworkControls::repeat_penalty>,
               nullptr,
               // common_sampler_init refuses these (it throws std::invalid_argument).
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.repeat_penalty > 0 && std::isfinite(c.repeat_penalty) && std::isfinite(1.0f / static_cast<float>(c.repeat_penalty)); }});
  t.push_back({"frequency_penalty", ParamKind::real, kLlamaCppOnly, false, false, kSetsChain, "frequency_penalty",
               {{"--frequency-penalty", kOurs}}, "subtracted per occurrence in the window",
               [] { return std::string("a finite number (0 turns it off)"); },
               control_real<&FrameworkControls::frequency_penalty>,
               read_control_real<&FrameworkControls::frequency_penalty>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return std::isfinite(c.frequency_penalty); }});
  t.push_back({"presence_penalty", ParamKind::real, kLlamaCppOnly, false, false, kSetsChain, "presence_penalty",
               {{"--presence-penalty", kOurs}}, "subtracted once for a token in the window",
               [] { return std::string("a finite number (0 turns it off)"); },
               control_real<&FrameworkControls::presence_penalty>,
               read_control_real<&FrameworkControls::presence_penalty>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return std::isfinite(c.presence_penalty); }});
  t.push_back({"logit_bias", ParamKind::token_list, kLlamaCppOnly, false, false, kSetsChain, "logit_bias",
               {{"--logit-bias", kOurs}}, "added to tokens' logits",
               [] {
                 return std::string(
                     "a list of [token id or text, bias] pairs (a text biases every token it encodes to), bias a finite number or "
                     "false / \"-Infinity\" (never), e.g. [[50256, false], [\"Hello\", -0.5]]");
               },
               control_list<kLogitBias>, read_control_list<kLogitBias>, nullptr});
  t.push_back({"top_n_sigma", ParamKind::real, kLlamaCppOnly, true, false, kSetsChain, "top_n_sigma",
               {{"--top-n-sigma", kOurs}}, "keep logits within n standard deviations of the top",
               [] { return std::string("a finite number (<= 0 turns it off, e.g. -1)"); },
               control_real<&FrameworkControls::top_n_sigma>, read_control_real<&FrameworkControls::top_n_sigma>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return std::isfinite(c.top_n_sigma); }});
  t.push_back({"dynatemp_range", ParamKind::real, kLlamaCppOnly, true, false, kSetsChain, "dynatemp_range",
               {{"--dynatemp-range", kOurs}}, "dynamic temperature's range",
               [] { return std::string("a finite number >= 0 (0 turns it off)"); },
               control_real<&FrameworkControls::dynatemp_range>, read_control_real<&FrameworkControls::dynatemp_range>,
               nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return std::isfinite(c.dynatemp_range) && c.dynatemp_range >= 0; }});
  t.push_back({"dynatemp_exponent", ParamKind::real, kLlamaCppOnly, true, false, kSetsChain, "dynatemp_exponent",
               {{"--dynatemp-exponent", kOurs}, {"--dynatemp-exp", kLlama}}, "dynamic temperature's exponent",
               [] { return std::string("a finite number"); },
               control_real<&FrameworkControls::dynatemp_exponent>,
               read_control_real<&FrameworkControls::dynatemp_exponent>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return std::isfinite(c.dynatemp_exponent); }});
  t.push_back({"min_keep", ParamKind::integer, kLlamaCppOnly, true, false, kSetsChain, "min_keep",
               {{"--min-keep", kOurs}}, "the fewest tokens a filter keeps",
               [] { return std::string("an integer >= 0"); },
               control_integer<&FrameworkControls::min_keep>, read_control_integer<&FrameworkControls::min_keep>, nullptr,
               [](const RunParams& p) { const FrameworkControls& c = p.sampling.controls; return c.min_keep >= 0; }});
  // Not part of the run id: the same run through two engines keeps its id, so diff pairs them
  // and names the engine as the difference.
  t.push_back({"engine", ParamKind::name, kEveryFramework, false, true, kShapesModel, "engine", {{"--engine", kOurs}},
               "genrepro | llama.cpp: whose forward pass computes the logits (docs/engines.md) [default genrepro]",
               [] { return one_of_names({"genrepro", "llama.cpp"}) + " (llama.cpp runs greedy or with framework llama.cpp)"; },
               [](const RunParams& p) -> ordered_json { return to_string(p.engine); },
               [](RunParams& p, const json& v) -> Problem {
                 if (!v.is_string()) return refused(v);
                 const auto e = parse_engine(v.get<std::string>());
                 if (!e) return refused(v);
                 p.engine = *e;
                 return std::nullopt;
               },
               nullptr, nullptr,
               "run ids leave the engine out so that one run through two engines pairs; give one engine and "
               "run the file once per engine (genrepro run --engine)"});
  return t;
}

}  // namespace

unsigned framework_bit(Framework f) {
  switch (f) {
    case Framework::article: return kArticleOnly;
    case Framework::hf: return kHfOnly;
    case Framework::llama_cpp: return kLlamaCppOnly;
  }
  return 0;
}

const std::vector<ParamRow>& param_table() {
  static const std::vector<ParamRow> table = make_table();
  return table;
}

const ParamRow* find_param(const std::string& key) {
  for (const ParamRow& row : param_table())
    if (key == row.key) return &row;
  return nullptr;
}

const ParamRow& param(const std::string& key) {
  const ParamRow* row = find_param(key);
  if (!row) throw std::logic_error("no run parameter '" + key + "' in the parameter table");
  return *row;
}

std::string primary_spelling(const std::string& spelling) {
  for (const ParamRow& row : param_table())
    for (const FlagSpelling& f : row.flags)
      if (spelling == f.text) return row.flags.front().text;
  return spelling;
}

const std::vector<const ParamRow*>& control_rows() {
  static const std::vector<const ParamRow*> rows = [] {
    std::vector<const ParamRow*> out;
    for (const ParamRow& row : param_table())
      if (row.is_control()) out.push_back(&row);
    return out;
  }();
  return rows;
}

bool has_evidence_type(ParamKind k, const json& v) {
  switch (k) {
    case ParamKind::mode: case ParamKind::name: return v.is_string();
    case ParamKind::real: return v.is_number();
    case ParamKind::integer: case ParamKind::copy: return v.is_number_integer();
    case ParamKind::seed: return v.is_number_unsigned();
    case ParamKind::boolean: return v.is_boolean();
    case ParamKind::stages: case ParamKind::token_list: return v.is_array();
  }
  return false;
}

const char* evidence_type_words(ParamKind k) {
  switch (k) {
    case ParamKind::mode: return "\"greedy\" or \"sample\"";
    case ParamKind::name: return "a string";
    case ParamKind::real: return "a number";
    case ParamKind::integer: case ParamKind::copy: return "an integer";
    case ParamKind::seed: return "a non-negative integer";
    case ParamKind::boolean: return "true or false";
    case ParamKind::stages: return "a list of stage names";
    case ParamKind::token_list: return "a list";
  }
  return "?";
}

bool written_in_evidence(const ParamRow& row, const RunParams& p) {
  const Framework f = p.sampling.framework;
  if (row.kind == ParamKind::copy) return p.replica > 0;
  if (std::string(row.key) == "framework") return f != Framework::article;
  if (std::string(row.key) == "engine") return p.engine != Engine::genrepro;
  if (row.is_control()) return f != Framework::article && row.has(f);
  return true;
}

std::string label_value(const ParamRow& row, const RunParams& p) {
  const ordered_json v = row.get(p);
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return value_text(row, v, "→");
}

std::string csv_value(const ParamRow& row, const RunParams& p) {
  return value_text(row, row.get(p), " ");
}

RunParams framework_defaults(Framework f, DecodeMode mode) {
  RunParams p;
  p.sampling.mode = mode;
  resolve_framework(p.sampling, f);
  return p;
}

std::vector<LabelPart> label_parts(const RunParams& p) {
  const SamplingParams& s = p.sampling;
  std::vector<LabelPart> parts;
  if (p.engine != Engine::genrepro) parts.push_back({"engine", std::string(to_string(p.engine)) + " engine"});
  if (s.framework != Framework::article) parts.push_back({"framework", to_string(s.framework)});
  const RunParams preset = framework_defaults(s.framework, s.mode);
  const RunParams off;  // every control at its off value
  const bool greedy = s.mode == DecodeMode::greedy;
  if (greedy) parts.push_back({"mode", "greedy"});
  for (const ParamRow& row : param_table()) {
    if (!row.label || (greedy && row.sampling_only)) continue;
    if (!(row.diff_groups & (kSetsSampler | kSetsKept | kSetsChain))) continue;
    const std::string key = row.key;
    bool shown = false;
    if (row.is_control()) shown = row.has(s.framework) && row.get(p) != row.get(off);  // a control that is on
    else if (key == "top_k") shown = s.top_k > 0;
    else if (key == "top_p") shown = s.top_p < 1;
    else if (key == "temperature" || key == "seed") shown = true;
    else if (key == "top_p_rule") shown = s.top_p < 1 && row.get(p) != row.get(preset);  // a rule acts only with top-p on
    else shown = row.get(p) != row.get(preset);  // order, rule, rng: where not the framework's own
    if (shown) parts.push_back({key, std::string(row.label) + "=" + label_value(row, p)});
  }
  return parts;
}

}  // namespace genrepro
