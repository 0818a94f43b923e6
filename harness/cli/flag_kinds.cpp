#include "cli/flag_kinds.hpp"

#include "params/experiment_file.hpp"
#include "params/param_table.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "evidence/numerics_record.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

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

IntegerRange integer_flag_range(const std::string& spelling, bool is_unsigned) {
  constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  // Another framework's spelling of a parameter's flag (-n) has the parameter's range.
  const std::string flag = primary_spelling(spelling);
  if (flag == "--threads") return {1, static_cast<uint64_t>(kMaxThreads)};
  if (flag == "--max-runs") return {1, kMaxRunsCeiling};
  if (flag == "--batch") return {1, static_cast<uint64_t>(kMaxBatch)};
  // Counts the library bounds later (by the model's context, the vocabulary, the evidence size).
  if (flag == "--max-new-tokens") return {0, kInt64Max, "0 records only the first prediction"};
  if (flag == "--top-k") return {0, kInt64Max, "0 turns top-k off"};
  if (flag == "--top-candidates") return {0, kInt64Max};
  if (flag == "--eos") return {0, kInt64Max, "a token id"};
  if (flag == "--max-kept") return {0, kInt64Max, "0 lists no ids"};
  if (is_unsigned) return {0, std::numeric_limits<uint64_t>::max()};
  return {std::numeric_limits<int64_t>::min(), kInt64Max};
}

std::string checked_decimal(const std::string& flag, const std::string& text, const IntegerRange& range) {
  const auto fail = [&]() -> std::string {
    throw UsageError(flag + " " + text + ": allowed: a whole number from " + std::to_string(range.min) + " to " +
                     std::to_string(range.max) + " in decimal digits" + (range.note.empty() ? "" : "; " + range.note));
  };
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = text.substr(negative ? 1 : 0);
  if (digits.empty()) return fail();
  uint64_t magnitude = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return fail();
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (magnitude > (std::numeric_limits<uint64_t>::max() - digit) / 10) return fail();
    magnitude = magnitude * 10 + digit;
  }
  if (negative && magnitude != 0) {
    // -magnitude >= min, with min <= 0 here; computed in unsigned to reach INT64_MIN.
    if (range.min >= 0) return fail();
    const uint64_t lowest = static_cast<uint64_t>(-(range.min + 1)) + 1;
    if (magnitude > lowest) return fail();
    return "-" + std::to_string(magnitude);
  }
  if (static_cast<int64_t>(std::min<uint64_t>(magnitude, std::numeric_limits<int64_t>::max())) < range.min ||
      magnitude > range.max)
    return fail();
  return std::to_string(magnitude);
}

std::string checked_real_text(const std::string& flag, const std::string& text) {
  const size_t digits = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  if (text.size() > digits + 1 && text[digits] == '0' && (text[digits + 1] == 'x' || text[digits + 1] == 'X'))
    throw UsageError(flag + " " + text + ": allowed: a decimal number (hexadecimal is not read)");
  const std::string problem = underflow_problem(text);
  if (!problem.empty()) throw UsageError(flag + " " + text + ": " + problem);
  return text;
}

void read_numbers_as_decimal(CLI::App& app) {
  for (CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; })) read_numbers_as_decimal(*verb);
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    const std::string flag = opt->get_lnames().empty() ? opt->get_name() : "--" + opt->get_lnames().front();
    if (type == "FLOAT") {
      opt->transform(CLI::Validator([flag](std::string& text) { return checked_real_text(flag, text), std::string(); },
                                    "", "decimal"));
      continue;
    }
    if (type != "INT" && type != "UINT") continue;
    const IntegerRange range = integer_flag_range(flag, type == "UINT");
    opt->transform(CLI::Validator(
        [flag, range](std::string& text) {
          text = checked_decimal(flag, text, range);
          return std::string();
        },
        "", "decimal"));
  }
}

void name_path_placeholders(CLI::App& app) {
  // What each path flag holds, the same word in every verb (CLI11 alone shows TEXT for them).
  constexpr std::pair<const char*, const char*> kPlaceholders[] = {
      {"model", "DIR"}, {"out", "PATH"}, {"golden", "PATH"}, {"into", "DIR"}, {"input", "PATH"}, {"tokenizer-dir", "DIR"}};
  for (CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; })) name_path_placeholders(*verb);
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_name() != "TEXT" || opt->get_lnames().empty()) continue;
    for (const auto& [flag, placeholder] : kPlaceholders)
      if (opt->get_lnames().front() == flag) opt->type_name(placeholder);
  }
}

void refuse_empty_paths(CLI::App& app) {
  for (CLI::App* verb : app.get_subcommands([](const CLI::App*) { return true; })) refuse_empty_paths(*verb);
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if ((type != "PATH" && type != "DIR" && type != "FILE") || opt->get_lnames().empty()) continue;
    const std::string flag = "--" + opt->get_lnames().front();
    // Output paths keep their own rule and wording (output_paths.hpp: a file or a directory).
    if (flag == "--out" || flag == "--junit") continue;
    const std::string what = type == "DIR" ? "directory" : "file";
    opt->check(CLI::Validator(
        [flag, what](std::string& value) -> std::string {
          if (value.empty()) throw UsageError(flag + " is empty; give a " + what + " path");
          return {};
        },
        "", "non-empty path"));
  }
}

}  // namespace genrepro::cli
