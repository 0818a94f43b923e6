#include "cli/flag_kinds.hpp"

#include "spec/experiment_spec.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

// A double as the user can recognise it: the shortest text that reads back to it.
std::string shown(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v) break;
  }
  return text;
}

}  // namespace

int checked_threads(const std::string& flag, int threads) {
  if (threads < 1 || threads > kMaxThreads)
    throw UsageError(flag + " " + std::to_string(threads) + ": allowed: a whole number from 1 to " +
                     std::to_string(kMaxThreads));
  return threads;
}

double checked_tolerance(const std::string& flag, double tolerance) {
  if (!(std::isfinite(tolerance) && tolerance >= 0))
    throw UsageError(flag + " " + shown(tolerance) + ": must be a finite number >= 0");
  return tolerance;
}

Shard checked_shard(const std::string& text) { return parse_shard(text); }

uint64_t checked_max_runs(const std::string& flag, int64_t max_runs) {
  if (max_runs < 1 || static_cast<uint64_t>(max_runs) > kMaxRunsCeiling)
    throw UsageError(flag + " " + std::to_string(max_runs) + ": allowed: a whole number from 1 to " +
                     std::to_string(kMaxRunsCeiling) + " (runs the experiments may expand to; default " +
                     std::to_string(kDefaultMaxRuns) + ")");
  return static_cast<uint64_t>(max_runs);
}

}  // namespace genrepro::cli
