#include "util/shard.hpp"

#include <algorithm>

#include "util/errors.hpp"

namespace genrepro {

namespace {

// More shards than this is a typo, not a cluster.
constexpr int64_t kMaxShards = 1000000;

bool parse_count(const std::string& digits, int64_t& out) {
  if (digits.empty() || digits.size() > 7) return false;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
  out = std::stoll(digits);
  return true;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto fail = [&] {
    throw UsageError("--shard " + text + ": expected I/N with whole numbers 1 <= I <= N <= " + std::to_string(kMaxShards) +
                     ", e.g. --shard 1/4 for the first of four shards");
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) fail();
  Shard s;
  if (!parse_count(text.substr(0, slash), s.index) || !parse_count(text.substr(slash + 1), s.count)) fail();
  if (s.count < 1 || s.count > kMaxShards || s.index < 1 || s.index > s.count) fail();
  return s;
}

}  // namespace genrepro
