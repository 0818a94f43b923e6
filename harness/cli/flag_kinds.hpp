#pragma once
// One function per kind of flag value, used by every verb that takes such a value, so the same
// flag has the same bounds and the same message everywhere, and every value is checked before
// any work starts (before a model is located, a file written or a token computed). Each throws
// UsageError naming the flag, the value and what is allowed. Paths: output_paths.hpp.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

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

// --max-runs: a whole number from 1 to kMaxRunsCeiling (params/experiment_file.hpp).
uint64_t checked_max_runs(const std::string& flag, int64_t max_runs);

// Integers on the command line are decimal only (docs/validation.md): an optional '-', then
// digits; leading zeros are read as decimal (`printf %03d` scripts write them), and 0x.., 0o..,
// 0b.. are refused, as is any value outside the flag's range, never clamped. CLI11 alone reads
// `050` as octal 40, `0x10` as 16, and saturates 99999999999999999999 to INT64_MAX.
struct IntegerRange {
  int64_t min;
  uint64_t max;
  std::string note = {};  // what a value means, for the message ("0 turns top-k off")
};

// The range of an integer flag, by name, so a flag has one range in every verb. A flag not
// listed gets its type's range (`is_unsigned`: [0, 2^64 - 1], else int64's).
IntegerRange integer_flag_range(const std::string& flag, bool is_unsigned);

// `text` as a decimal integer in `range`, in canonical form (no leading zeros), or UsageError
// "FLAG TEXT: allowed: a whole number from MIN to MAX in decimal digits[; NOTE]".
std::string checked_decimal(const std::string& flag, const std::string& text, const IntegerRange& range);

// A real-valued flag as written: decimal (CLI11 alone reads 0x1p3), and never a non-zero value
// too small for a double (`--temperature 1e-400` would be 0, greedy). Returns `text`, or throws
// UsageError naming the flag and the value.
std::string checked_real_text(const std::string& flag, const std::string& text);

// Gives every number-typed option of every verb under `app` the readings above before CLI11
// converts the text: integers (CLI11 type names INT, UINT) checked_decimal, reals (FLOAT)
// checked_real_text. Called once on the whole app, so no verb can forget it.
void read_numbers_as_decimal(CLI::App& app);

// Gives every path-valued option still shown as TEXT its placeholder (--model DIR, --out PATH,
// --golden PATH, --into DIR, --input PATH), so help reads the same in every verb.
void name_path_placeholders(CLI::App& app);

// Refuses an empty value for every option whose placeholder is PATH, DIR or FILE, in every verb
// ("--golden is empty; give a file path"): `--golden "$UNSET"` must be exit 2, not a report
// without its verdict. --out and --junit keep output_paths.hpp's own check. Call after
// name_path_placeholders.
void refuse_empty_paths(CLI::App& app);

}  // namespace genrepro::cli
