#include "evidence/logits_digest.hpp"

#include <cstdint>
#include <cstdio>

#include "util/xxh64.hpp"

namespace genrepro {

namespace {

// The digest is of the values' little-endian bytes; on such a host those are the bytes in memory.
// A big-endian port would swap each float's bytes before hashing.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "logits_digest hashes little-endian float32 bytes");
static_assert(sizeof(float) == 4, "logits are IEEE-754 binary32");

constexpr std::size_t kXxh64HexDigits = 16;
constexpr std::size_t kMinHexDigits = 16;  // 64 bits: an accidental collision is ~2^-64 per pair

bool is_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (!first && ((c >= '0' && c <= '9') || c == '-'));
}
bool is_hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

std::string logits_digest(const float* logits, std::size_t count) {
  const uint64_t h = xxh64(logits, count * sizeof(float), 0);
  char hex[kXxh64HexDigits + 1];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(kLogitsDigestAlgorithm) + ":" + hex;
}

std::string logits_digest_problem(const std::string& value) {
  const std::string allowed =
      "\"xxh64:\" and 16 lower-case hex digits (XXH64 of the step's float32 logits), or another algorithm's "
      "\"<name>:<hex>\" with an even number of at least 16 hex digits";
  const std::size_t colon = value.find(':');
  if (colon == std::string::npos || colon == 0) return allowed;
  for (std::size_t i = 0; i < colon; ++i)
    if (!is_name_char(value[i], i == 0)) return allowed;
  const std::size_t digits = value.size() - colon - 1;
  for (std::size_t i = colon + 1; i < value.size(); ++i)
    if (!is_hex_digit(value[i])) return allowed;
  if (value.compare(0, colon, kLogitsDigestAlgorithm) == 0) return digits == kXxh64HexDigits ? "" : allowed;
  return digits >= kMinHexDigits && digits % 2 == 0 ? "" : allowed;
}

std::string logits_digest_algorithm(const std::string& value) { return value.substr(0, value.find(':')); }

}  // namespace genrepro
