#pragma once
// --shard I/N: a deterministic subset of the expanded runs, so a large grid can be spread over a
// CI matrix or a cluster job array. Shard I of N (1-based) takes the runs whose index in the
// unsharded expansion satisfies index % N == I - 1: every run lands in exactly one shard, and
// neighbouring runs (often of similar cost) are spread across shards.
#include <cstdint>
#include <string>

namespace genrepro {

struct Shard {
  int64_t index = 1;  // 1-based
  int64_t count = 1;
};

// Parses "I/N" with 1 <= I <= N; throws UsageError naming the flag and what is allowed.
Shard parse_shard(const std::string& text);

inline bool shard_selects(const Shard& shard, int64_t run_index) { return run_index % shard.count == shard.index - 1; }

}  // namespace genrepro
