#pragma once
// Which runs to compare when their ids differ. A run id hashes every parameter, so changing one
// value (top_p 0.9 -> 0.95) gives every run of the grid a new id, and matching by id alone sees
// only missing and extra runs. Pairing matches a golden run the new evidence lacks with a new
// run the golden lacks when both share the values of a list of keys (by default experiment,
// prompt, seed and grid position): those two ran the same experiment cell with other settings.
// The pairing explains, it never excuses: a paired run still fails the gate (docs/diff.md,
// "Pairing across a parameter change"). No libtorch; callers: diff (evidence_diff.cpp), report.
#include <string>
#include <vector>

#include "evidence/evidence.hpp"

namespace genrepro {

// What `diff` pairs by when --pair-by is not given.
inline constexpr const char* kDefaultPairBy = "experiment,prompt,seed,position";

// The keys a pairing may use: "experiment", "prompt" (the prompt's index in its experiment),
// "position" (the run's place among its experiment's runs of that prompt, in expansion order,
// counted from 0), and every key of a run's params ("temperature", "top_p", "seed", ...), the
// frameworks' included ("framework", "min_p", "repetition_penalty", ...: compared_params.hpp,
// where a run of another framework holds the key's off value).
std::vector<std::string> pair_keys_allowed();

// "experiment,prompt,seed" -> its keys, checked; throws UsageError naming the flag, the bad key
// and the allowed ones (`flag` is how the caller names the list, e.g. "--pair-by").
std::vector<std::string> parse_pair_by(const std::string& list, const std::string& flag);

struct RunPair {
  const RunRecord* golden = nullptr;
  const RunRecord* current = nullptr;
};

// Pairs the runs of `golden` whose id is not among `current`'s with the runs of `current` whose
// id is not among `golden`'s, when they share the value of every key. Position is counted over
// all runs of a side, so it does not move when only some runs changed. Only one-to-one matches
// pair: runs that share a key value with another unmatched run on the same side pair with
// nothing (which of them would be the partner is a guess). Pairs come in `golden`'s order.
std::vector<RunPair> pair_runs(const std::vector<const RunRecord*>& golden, const std::vector<const RunRecord*>& current,
                               const std::vector<std::string>& keys);

}  // namespace genrepro
