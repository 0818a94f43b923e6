#pragma once
// The one place that says which sampling parameters are allowed, so that CLI flags and
// experiment files reject the same values with the same words. No libtorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/run_params.hpp"

namespace genrepro {

// Stage names a sampler_order may contain.
const std::vector<std::string>& sampler_stage_names();  // {"temperature", "top_k", "top_p"}

struct ParamProblem {
  std::string field;    // the RunParams field: "temperature", "top_p", "sampler_order", ...
  std::string value;    // the offending value as the user wrote it / as printed
  std::string allowed;  // what is allowed, e.g. "a number >= 0 (0 means greedy)"
};

// Every problem with `p` (empty when valid): T < 0, top_p outside (0, 1], top_k < 0,
// unknown or repeated sampler stage, a sampling parameter that is set (mode sample) while its
// stage is missing from sampler_order, unknown top_p_rule / rng, max_new_tokens < 0,
// top_candidates < 0. The CLI names the flag (--temperature), the spec names the JSON path.
std::vector<ParamProblem> check_run_params(const RunParams& p);

// Parses "temperature,top_k,top_p" style lists; throws SpecError naming the bad stage.
std::vector<std::string> parse_sampler_order(const std::string& comma_separated);

// Allowed values of top_p_rule ({"article", "hf"}) and rng ({"torch", "portable"}).
const std::vector<std::string>& top_p_rule_names();
const std::vector<std::string>& rng_names();

// A seed as the user wrote it: decimal digits only, below 2^64. Empty for "-1", "abc", "1.5",
// "1e3", "" or an overflow; callers report it with seed_allowed().
std::optional<uint64_t> parse_seed(const std::string& text);
const char* seed_allowed();

// One line for a problem: "<where> = <value> is not allowed; allowed: <allowed>", where `where`
// is the flag (--temperature) or the JSON path (experiments[0].sampling.temperature).
std::string describe_problem(const ParamProblem& problem, const std::string& where);

}  // namespace genrepro
