#pragma once
// The byte-level BPE model: GPT-2's vocabulary (token id <-> raw bytes) and its ranked merges,
// and the merge loop that turns one pre-tokenized word into token ids.
//
// Everything here is raw bytes: the byte symbols of vocab.json / merges.txt ('Ġ' for a space)
// are converted when the files are loaded (tokenizer_files.cpp).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/id_slots.hpp"
#include "tokenizer/merge_table.hpp"

namespace genrepro {

struct BpeModel {
  std::vector<std::string> token_bytes;                    // id -> bytes
  std::array<int32_t, 256> byte_ids{};                     // the single-byte tokens
  MergeTable merges;                                       // (left id, right id) -> merge

  // Makes room for ids 0..count-1, all without bytes yet (clears what was there).
  void reserve_tokens(size_t count);
  // Gives token `id` (< the reserved count) its bytes; false, and nothing changed, when another
  // token already has them.
  bool add_token(int32_t id, std::string bytes);
  // The id of the token with these bytes, or -1.
  int32_t id_of(std::string_view bytes) const;

  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
  }

  // Appends the ids of one word (a piece of the pre-tokenizer) to `out`, with GPT-2's rule:
  // repeatedly take the adjacent pair of lowest rank and merge all its non-overlapping
  // occurrences left to right, until no adjacent pair has a merge. Runs in O(n log n) for a word
  // of n bytes (a heap of candidate pairs over a linked list), so one huge word stays fast.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

 private:
  // bytes -> id over token_bytes. The checked merges reader makes three lookups a line; a
  // node-based map of strings made those most of a load's time.
  IdSlots id_slots_;
};

}  // namespace genrepro
