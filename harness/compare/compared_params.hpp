#pragma once
// A run's parameters as diff, pairing and bless compare them (docs/diff.md, "What is compared").
// Evidence writes a framework's keys only for runs of that framework (an article run writes none,
// an hf run none of llama.cpp's), so two runs of different frameworks hold different key sets.
// Compared as written, article -> hf would list nothing but keys that "appear" (and a key one
// side lacks would never be compared at all). Here every run has every key: `framework` is
// "article" where evidence leaves it out, and a control its framework lacks holds its off value
// (FrameworkControls' defaults, which an article run keeps: docs/sampling.md). So a change lists
// what the new framework turns on (top_k 0 -> 40, min_p 0 -> 0.05), and `--pair-by min_p` means
// the same for every run. No libtorch.
#include <string>
#include <vector>

#include "params/param_table.hpp"
#include "params/run_params.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// "framework" (written or not), then params_to_json(p)'s article keys in its order, then every
// control key in control_keys() order: the same keys in the same order for every run.
OrderedJson compared_params(const RunParams& p);

// The keys of compared_params, in its order (the same for every run).
std::vector<std::string> compared_param_keys();

// "framework" or a control key (params/framework_params.hpp): a key of a framework's chain.
bool is_framework_key(const std::string& key);

// Whether a difference in `key` explains a change of the kinds `diff_groups` names (DiffGroup
// bits of params/param_table.hpp: the table says which parameter explains what).
bool explains(const std::string& key, unsigned diff_groups);

}  // namespace genrepro
