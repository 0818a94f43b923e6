#pragma once
// XXH64 (Yann Collet's xxHash, 64-bit, as specified in xxHash's doc/xxhash_spec.md), so a step's
// float32 logits row (201 KB for GPT-2) can be pinned in the evidence at a few microseconds a step.
// Words are read little-endian whatever the host, as the specification says; the result is the
// same on every machine and compiler. Checked against the specification's test vectors and
// against libxxhash itself (tests/unit/util/xxh64_test.cpp, tests/data/logits-digest.json).
#include <cstddef>
#include <cstdint>

namespace genrepro {

uint64_t xxh64(const void* data, std::size_t size, uint64_t seed = 0);

}  // namespace genrepro
