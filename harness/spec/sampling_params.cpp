#include "spec/sampling_params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "util/errors.hpp"

namespace genrepro {

namespace {

// Prints a double the way a user would have typed it back (shortest form that round-trips).
std::string number_text(double v) {
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream out;
    out.precision(digits);
    out << v;
    if (std::isnan(v) || std::strtod(out.str().c_str(), nullptr) == v) return out.str();
  }
  return std::to_string(v);
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

bool is_stage_name(const std::string& name) {
  const auto& names = sampler_stage_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string allowed_stages() {
  return "a comma-separated list of distinct stages from {" + join(sampler_stage_names(), ", ") + "}";
}

}  // namespace

const std::vector<std::string>& sampler_stage_names() {
  static const std::vector<std::string> names = {"temperature", "top_k", "top_p"};
  return names;
}

const std::vector<std::string>& top_p_rule_names() {
  static const std::vector<std::string> names = {"article", "hf"};
  return names;
}

const std::vector<std::string>& rng_names() {
  static const std::vector<std::string> names = {"torch", "portable"};
  return names;
}

std::vector<ParamProblem> check_run_params(const RunParams& p) {
  std::vector<ParamProblem> problems;
  const SamplingParams& s = p.sampling;
  // NaN fails every comparison, so each check is written as "not (allowed)".
  if (!(s.temperature >= 0 && std::isfinite(s.temperature)))
    problems.push_back({"temperature", number_text(s.temperature), "a finite number >= 0 (0 means greedy)"});
  if (!(s.top_p > 0 && s.top_p <= 1))
    problems.push_back({"top_p", number_text(s.top_p), "a number in (0, 1] (1 turns top-p off)"});
  if (s.top_k < 0)
    problems.push_back({"top_k", std::to_string(s.top_k), "an integer >= 0 (0 turns top-k off)"});
  std::vector<std::string> seen;
  for (const auto& stage : s.sampler_order) {
    if (!is_stage_name(stage)) {
      problems.push_back({"sampler_order", stage, allowed_stages()});
    } else if (std::find(seen.begin(), seen.end(), stage) != seen.end()) {
      problems.push_back({"sampler_order", stage + " (repeated)", allowed_stages()});
    }
    seen.push_back(stage);
  }
  // A sampling parameter whose stage the order leaves out would be silently ignored; say so.
  if (s.mode == DecodeMode::sample) {
    const auto in_order = [&](const char* stage) {
      return std::find(s.sampler_order.begin(), s.sampler_order.end(), stage) != s.sampler_order.end();
    };
    if (s.temperature != 1 && s.temperature > 0 && !in_order("temperature"))
      problems.push_back({"sampler_order", join(s.sampler_order, ","),
                          "an order that contains temperature, since temperature is " + number_text(s.temperature)});
    if (s.top_k > 0 && !in_order("top_k"))
      problems.push_back({"sampler_order", join(s.sampler_order, ","),
                          "an order that contains top_k, since top_k is " + std::to_string(s.top_k)});
    if (s.top_p > 0 && s.top_p < 1 && !in_order("top_p"))
      problems.push_back({"sampler_order", join(s.sampler_order, ","),
                          "an order that contains top_p, since top_p is " + number_text(s.top_p)});
  }
  const auto& rules = top_p_rule_names();
  if (std::find(rules.begin(), rules.end(), s.top_p_rule) == rules.end())
    problems.push_back({"top_p_rule", s.top_p_rule, "one of {" + join(rules, ", ") + "}"});
  const auto& rngs = rng_names();
  if (std::find(rngs.begin(), rngs.end(), s.rng) == rngs.end())
    problems.push_back({"rng", s.rng, "one of {" + join(rngs, ", ") + "}"});
  if (p.max_new_tokens < 0)
    problems.push_back({"max_new_tokens", std::to_string(p.max_new_tokens),
                        "an integer >= 0 (0 records only the first prediction)"});
  if (p.top_candidates < 0)
    problems.push_back({"top_candidates", std::to_string(p.top_candidates), "an integer >= 0"});
  return problems;
}

std::vector<std::string> parse_sampler_order(const std::string& comma_separated) {
  std::vector<std::string> stages;
  std::string item;
  std::istringstream in(comma_separated);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    std::string stage = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    if (!is_stage_name(stage))
      throw SpecError("sampler order '" + comma_separated + "': unknown stage '" + stage +
                      "'; allowed: " + allowed_stages() + ", e.g. temperature,top_k,top_p");
    if (std::find(stages.begin(), stages.end(), stage) != stages.end())
      throw SpecError("sampler order '" + comma_separated + "': stage '" + stage +
                      "' appears twice; allowed: " + allowed_stages());
    stages.push_back(stage);
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
  return where + " = " + problem.value + " is not allowed; allowed: " + problem.allowed;
}

}  // namespace genrepro
