#pragma once
// A step's logits digest: a hash of the full float32 logits row the model gave at that
// step, before temperature and filters, so "bit-identical" is provable without storing logits.
// Written as "<algorithm>:<lower-case hex>", today "xxh64:" and 16 hex digits: XXH64 (seed 0) of
// the row's V little-endian IEEE-754 binary32 values, 4·V bytes in token-id order. The algorithm
// is named in every value, so a digest made by another algorithm is never read as other bits.
// docs/evidence-format.md, "Meaning of the step fields".
#include <cstddef>
#include <string>

namespace genrepro {

inline constexpr const char* kLogitsDigestAlgorithm = "xxh64";

// "xxh64:<16 hex digits>" of `count` floats in host memory.
std::string logits_digest(const float* logits, std::size_t count);

// Empty when `value` has a digest's form: an algorithm name ([a-z][a-z0-9-]*), a colon, then
// lower-case hex digits, exactly 16 for xxh64 and an even number of at least 16 (64 bits) for
// any other (a later build's); otherwise what is allowed, for the reader's one-line message.
std::string logits_digest_problem(const std::string& value);

// The name before the colon ("xxh64"); the value must have passed logits_digest_problem.
std::string logits_digest_algorithm(const std::string& value);

}  // namespace genrepro
