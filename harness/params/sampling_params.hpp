#pragma once
// The one place that says which sampling parameters are allowed, so that CLI flags and
// experiment files reject the same values with the same words. No libtorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "params/run_params.hpp"

namespace genrepro {

// The names a sampler_order, top_p_rule and rng accept, in their enums' order:
// {"temperature", "top_k", "top_p"}, {"article", "hf"}, {"torch", "portable"}.
const std::vector<std::string>& sampler_stage_names();
const std::vector<std::string>& top_p_rule_names();
const std::vector<std::string>& rng_names();

// A temperature is 0 (greedy) or in [kMinTemperature, kMaxTemperature] (docs/sampling.md,
// "Float32 edges"). The logits are float32 and are divided by T in float32: below the minimum,
// logits / T overflows to infinity for logits that real models produce (|logit| / 1e-30 passes
// float32's largest 3.4e38 once |logit| > 3.4e8, and a T below 1.2e-38 is not even a normal
// float32), the softmax turns to NaN and the draw fails. Above the maximum, T itself is near the
// end of float32's range and every distribution is uniform to float precision long before.
inline constexpr double kMinTemperature = 1e-30;
inline constexpr double kMaxTemperature = 1e30;
// "0 (greedy) or a number from 1e-30 to 1e+30 (...)": the one description of the rule.
const char* temperature_allowed();

struct ParamProblem {
  std::string field;    // the RunParams field: "temperature", "top_p", "sampler_order", ...
  std::string value;    // the offending value as the user wrote it / as printed
  std::string allowed;  // what is allowed, e.g. "a number >= 0 (0 means greedy)"
};

// A name read into its typed value, or the problem to report where it was written (a flag or a
// JSON path): exactly one of the two is set.
template <class T>
struct Checked {
  std::optional<T> value;
  std::optional<ParamProblem> problem;
};

// "nucleus" -> {"top_p_rule", "nucleus", "one of {article, hf}"}; "mt" -> {"rng", "mt", "one of {torch, portable}"}.
Checked<TopPRule> check_top_p_rule(const std::string& name);
Checked<Rng> check_rng(const std::string& name);
// The stages named in order; the first name that is unknown ("top_q") or repeated
// ("temperature (repeated)") is the problem.
Checked<std::vector<SamplerStage>> check_sampler_order(const std::vector<std::string>& names);

// Every problem with `p` (empty when valid): T < 0, top_p outside (0, 1], top_k < 0, a repeated
// sampler stage, a sampling parameter that is set (mode sample) while its stage is missing from
// sampler_order, max_new_tokens < 0, top_candidates < 0. The CLI names the flag (--temperature),
// the spec names the JSON path. `name_problems` (from check_top_p_rule, check_rng) join the list
// at their field's place, so the first problem is the same whichever way the params were given:
// temperature, top_p, top_k, sampler_order, top_p_rule, rng, max_new_tokens, top_candidates.
std::vector<ParamProblem> check_run_params(const RunParams& p, std::vector<ParamProblem> name_problems = {});

// Parses "temperature,top_k,top_p" style lists; throws SpecError naming the bad stage.
std::vector<SamplerStage> parse_sampler_order(const std::string& comma_separated);

// A seed as the user wrote it: decimal digits only, below 2^64. Empty for "-1", "abc", "1.5",
// "1e3", "" or an overflow; callers report it with seed_allowed().
std::optional<uint64_t> parse_seed(const std::string& text);
const char* seed_allowed();

// One line for a problem: "<where> = <value> is not allowed; allowed: <allowed>", where `where`
// is the flag (--temperature) or the JSON path (experiments[0].sampling.temperature).
std::string describe_problem(const ParamProblem& problem, const std::string& where);

}  // namespace genrepro
