#include "params/run_params.hpp"

namespace genrepro {

namespace {

// The value of `all` whose to_string is `name`.
template <class Enum, size_t N>
std::optional<Enum> parse_name(const std::array<Enum, N>& all, const std::string& name) {
  for (Enum value : all) {
    if (name == to_string(value)) return value;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(DecodeMode m) {
  switch (m) {
    case DecodeMode::greedy: return "greedy";
    case DecodeMode::sample: return "sample";
  }
  return "?";
}

const char* to_string(SamplerStage s) {
  switch (s) {
    case SamplerStage::temperature: return "temperature";
    case SamplerStage::top_k: return "top_k";
    case SamplerStage::top_p: return "top_p";
    case SamplerStage::sequence_bias: return "sequence_bias";
    case SamplerStage::repetition_penalty: return "repetition_penalty";
    case SamplerStage::no_repeat_ngram_size: return "no_repeat_ngram_size";
    case SamplerStage::bad_words_ids: return "bad_words_ids";
    case SamplerStage::min_length: return "min_length";
    case SamplerStage::min_new_tokens: return "min_new_tokens";
    case SamplerStage::suppress_tokens: return "suppress_tokens";
    case SamplerStage::min_p: return "min_p";
    case SamplerStage::typical_p: return "typical_p";
    case SamplerStage::epsilon_cutoff: return "epsilon_cutoff";
    case SamplerStage::eta_cutoff: return "eta_cutoff";
    case SamplerStage::logit_bias: return "logit_bias";
    case SamplerStage::penalties: return "penalties";
    case SamplerStage::top_n_sigma: return "top_n_sigma";
    case SamplerStage::dist: return "dist";
  }
  return "?";
}

const char* to_string(TopPRule r) {
  switch (r) {
    case TopPRule::article: return "article";
    case TopPRule::hf: return "hf";
    case TopPRule::llama_cpp: return "llama.cpp";
  }
  return "?";
}

const char* to_string(Rng r) {
  switch (r) {
    case Rng::torch: return "torch";
    case Rng::portable: return "portable";
    case Rng::llama_cpp: return "llama.cpp";
  }
  return "?";
}

const char* to_string(Framework f) {
  switch (f) {
    case Framework::article: return "article";
    case Framework::hf: return "hf";
    case Framework::llama_cpp: return "llama.cpp";
  }
  return "?";
}

std::optional<SamplerStage> parse_sampler_stage(const std::string& name) { return parse_name(kSamplerStages, name); }
std::optional<TopPRule> parse_top_p_rule(const std::string& name) { return parse_name(kTopPRules, name); }
std::optional<Rng> parse_rng(const std::string& name) { return parse_name(kRngs, name); }
std::optional<Framework> parse_framework(const std::string& name) { return parse_name(kFrameworks, name); }

const char* to_string(Engine e) { return e == Engine::llama_cpp ? "llama.cpp" : "genrepro"; }

std::optional<Engine> parse_engine(const std::string& name) { return parse_name(kEngines, name); }

std::vector<std::string> stage_names(const std::vector<SamplerStage>& order) {
  std::vector<std::string> names;
  for (SamplerStage s : order) names.push_back(to_string(s));
  return names;
}

}  // namespace genrepro
