#pragma once
// One function per kind of flag value, used by every verb that takes such a value, so the same
// flag has the same bounds and the same message everywhere, and every value is checked before
// any work starts (before a model is located, a file written or a token computed). Each throws
// UsageError naming the flag, the value and what is allowed. Paths: output_paths.hpp.
#include <cstdint>
#include <string>

#include "cli/output_paths.hpp"
#include "util/shard.hpp"

namespace genrepro::cli {

// More worker threads than this is a typo, not a machine: each holds a model's activations, and
// libtorch would try to start them all (`generate --threads 100000` hung).
inline constexpr int kMaxThreads = 256;

// --threads: a whole number from 1 to kMaxThreads.
int checked_threads(const std::string& flag, int threads);

// --prob-tolerance, --logprob-tolerance: a finite number >= 0.
double checked_tolerance(const std::string& flag, double tolerance);

// --shard I/N (util/shard.hpp's rules and message).
Shard checked_shard(const std::string& text);

// --max-runs: a whole number from 1 to kMaxRunsCeiling (spec/experiment_spec.hpp).
uint64_t checked_max_runs(const std::string& flag, int64_t max_runs);

}  // namespace genrepro::cli
