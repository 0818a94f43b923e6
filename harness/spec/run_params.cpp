#include "spec/run_params.hpp"

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
  }
  return "?";
}

const char* to_string(TopPRule r) {
  switch (r) {
    case TopPRule::article: return "article";
    case TopPRule::hf: return "hf";
  }
  return "?";
}

const char* to_string(Rng r) {
  switch (r) {
    case Rng::torch: return "torch";
    case Rng::portable: return "portable";
  }
  return "?";
}

std::optional<SamplerStage> parse_sampler_stage(const std::string& name) { return parse_name(kSamplerStages, name); }
std::optional<TopPRule> parse_top_p_rule(const std::string& name) { return parse_name(kTopPRules, name); }
std::optional<Rng> parse_rng(const std::string& name) { return parse_name(kRngs, name); }

std::vector<std::string> stage_names(const std::vector<SamplerStage>& order) {
  std::vector<std::string> names;
  for (SamplerStage s : order) names.push_back(to_string(s));
  return names;
}

}  // namespace genrepro
