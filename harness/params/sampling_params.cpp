#include "params/sampling_params.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "params/framework_params.hpp"
#include "params/param_table.hpp"
#include "util/errors.hpp"
#include "params/number_text.hpp"
#include "util/joined.hpp"

namespace genrepro {

namespace {

std::string allowed_stages() {
  return "a comma-separated list of distinct stages from {" + joined(sampler_stage_names(), ", ") + "}";
}

std::string one_of(const std::vector<std::string>& names) { return "one of {" + joined(names, ", ") + "}"; }

template <class Enum, size_t N>
std::vector<std::string> names_of(const std::array<Enum, N>& all) {
  std::vector<std::string> names;
  for (Enum value : all) names.push_back(to_string(value));
  return names;
}

template <class T>
Checked<T> problem(std::string field, std::string value, std::string allowed) {
  return {std::nullopt, ParamProblem{std::move(field), std::move(value), std::move(allowed)}};
}

// The order check_run_params reports the article's fields in (a name problem joins the list at
// its field): the first problem is a message users and tests know, so its order is kept as it
// was declared before the parameter table, with top_p ahead of top_k; every other field after.
constexpr std::array<const char*, 8> kFieldOrder = {"temperature", "top_p", "top_k",          "sampler_order",
                                                    "top_p_rule",  "rng",   "max_new_tokens", "top_candidates"};

size_t field_rank(const std::string& field) {
  return static_cast<size_t>(std::find(kFieldOrder.begin(), kFieldOrder.end(), field) - kFieldOrder.begin());
}

}  // namespace

const std::vector<std::string>& sampler_stage_names() {
  static const std::vector<std::string> names = names_of(kSamplerStages);
  return names;
}

const std::vector<std::string>& top_p_rule_names() {
  static const std::vector<std::string> names = names_of(kTopPRules);
  return names;
}

const std::vector<std::string>& rng_names() {
  static const std::vector<std::string> names = names_of(kRngs);
  return names;
}

Checked<TopPRule> check_top_p_rule(const std::string& name) {
  if (const auto rule = parse_top_p_rule(name)) return {rule, std::nullopt};
  return problem<TopPRule>("top_p_rule", name, one_of(top_p_rule_names()));
}

Checked<Rng> check_rng(const std::string& name) {
  if (const auto rng = parse_rng(name)) return {rng, std::nullopt};
  return problem<Rng>("rng", name, one_of(rng_names()));
}

Checked<std::vector<SamplerStage>> check_sampler_order(const std::vector<std::string>& names) {
  std::vector<SamplerStage> stages;
  for (const std::string& name : names) {
    const auto stage = parse_sampler_stage(name);
    if (!stage) return problem<std::vector<SamplerStage>>("sampler_order", name, allowed_stages());
    if (std::find(stages.begin(), stages.end(), *stage) != stages.end())
      return problem<std::vector<SamplerStage>>("sampler_order", name + " (repeated)", allowed_stages());
    stages.push_back(*stage);
  }
  return {std::move(stages), std::nullopt};
}

const char* temperature_allowed() {
  return "0 (greedy) or a number from 1e-30 to 1e+30 (beyond them logits / T leaves float32's range)";
}

std::vector<ParamProblem> check_run_params(const RunParams& p, std::vector<ParamProblem> name_problems) {
  std::vector<ParamProblem> problems;
  const SamplingParams& s = p.sampling;
  // Each parameter of every run by its row's range (the frameworks' controls: check_framework_params).
  for (const ParamRow& row : param_table()) {
    if (row.is_control() || !row.in_range || row.in_range(p)) continue;
    const nlohmann::ordered_json v = row.get(p);
    problems.push_back({row.key, v.is_number_float() ? number_text(v.get<double>()) : v.dump(), row.allowed()});
  }
  // llama.cpp's engine samples only with llama.cpp's own chain, the one its users run; a greedy
  // pick is every framework's, and a first prediction (max_new_tokens 0) picks nothing.
  if (p.engine == Engine::llama_cpp && s.mode == DecodeMode::sample && s.framework != Framework::llama_cpp &&
      p.max_new_tokens > 0)
    problems.push_back({"framework", std::string("\"") + to_string(s.framework) + "\"",
                        "\"llama.cpp\" for a sampled run of engine llama.cpp (or mode greedy, or max_new_tokens 0)"});
  for (size_t i = 0; i < s.sampler_order.size(); ++i) {
    const auto first = std::find(s.sampler_order.begin(), s.sampler_order.end(), s.sampler_order[i]);
    if (static_cast<size_t>(first - s.sampler_order.begin()) != i)
      problems.push_back(
          {"sampler_order", std::string(to_string(s.sampler_order[i])) + " (repeated)", allowed_stages()});
  }
  // A sampling parameter whose stage the order leaves out would be silently ignored; say so.
  // (A framework's chain holds every stage: its own check, check_framework_params, says so.)
  if (s.mode == DecodeMode::sample && s.framework == Framework::article) {
    const auto in_order = [&](SamplerStage stage) {
      return std::find(s.sampler_order.begin(), s.sampler_order.end(), stage) != s.sampler_order.end();
    };
    const std::string order = joined(stage_names(s.sampler_order), ",");
    if (s.temperature != 1 && s.temperature > 0 && !in_order(SamplerStage::temperature))
      problems.push_back({"sampler_order", order,
                          "an order that contains temperature, since temperature is " + number_text(s.temperature)});
    if (s.top_k > 0 && !in_order(SamplerStage::top_k))
      problems.push_back(
          {"sampler_order", order, "an order that contains top_k, since top_k is " + std::to_string(s.top_k)});
    if (s.top_p > 0 && s.top_p < 1 && !in_order(SamplerStage::top_p))
      problems.push_back(
          {"sampler_order", order, "an order that contains top_p, since top_p is " + number_text(s.top_p)});
  }
  problems.insert(problems.end(), name_problems.begin(), name_problems.end());
  const std::vector<ParamProblem> framework = check_framework_params(p);
  problems.insert(problems.end(), framework.begin(), framework.end());
  std::stable_sort(problems.begin(), problems.end(), [](const ParamProblem& a, const ParamProblem& b) {
    return field_rank(a.field) < field_rank(b.field);
  });
  return problems;
}

std::vector<SamplerStage> parse_sampler_order(const std::string& comma_separated) {
  std::vector<SamplerStage> stages;
  std::string item;
  std::istringstream in(comma_separated);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    const std::string name = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    const auto stage = parse_sampler_stage(name);
    if (!stage)
      throw SpecError("sampler order '" + comma_separated + "': unknown stage '" + name +
                      "'; allowed: " + allowed_stages() + ", e.g. temperature,top_k,top_p");
    if (std::find(stages.begin(), stages.end(), *stage) != stages.end())
      throw SpecError("sampler order '" + comma_separated + "': stage '" + name +
                      "' appears twice; allowed: " + allowed_stages());
    stages.push_back(*stage);
  }
  // getline drops a trailing empty item ("a,b,"), which is still a typo worth naming.
  if (comma_separated.empty() || comma_separated.back() == ',')
    throw SpecError("sampler order '" + comma_separated + "': empty stage name; allowed: " +
                    allowed_stages() + ", e.g. temperature,top_k,top_p");
  return stages;
}

std::optional<uint64_t> parse_seed(const std::string& text) {
  // Only plain decimal digits: "-1" (which strtoull would wrap), "1.5", "1e3", "+3", " 4" are refused.
  if (text.empty() || text.size() > 20) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;  // would overflow 2^64 - 1
    value = value * 10 + digit;
  }
  return value;
}

const char* seed_allowed() { return "a non-negative integer below 2^64 (decimal digits only)"; }

std::string describe_problem(const ParamProblem& problem, const std::string& where) {
  return where + " = " + short_value(problem.value) + " is not allowed; allowed: " + problem.allowed;
}

}  // namespace genrepro
