#pragma once
// Repetition in a run's tokens, for every part of the report that measures it: the greedy
// section's "a span of N tokens occurs K times" and the grid summaries' longest_repeat figure.
// One function, so the two always agree on what a repeat is.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace genrepro {

// The longest token span that occurs twice without overlapping: its length (0: no token occurs
// twice), where its first two occurrences start (the earliest pair of the longest length), and
// how many non-overlapping times it occurs, counted from the left.
struct TokenRepeat {
  std::size_t length = 0;
  std::size_t first = 0;
  std::size_t second = 0;
  std::size_t count = 0;
};

// Dynamic programming over pairs of end positions, one row at a time: O(n²) time, O(n) memory.
TokenRepeat longest_repeat(const std::vector<int64_t>& ids);

}  // namespace genrepro
