#pragma once
// Reading well-formed tokenizer files in one pass each. The vocab's keys are kept as written (byte
// symbols, JSON escapes decoded) in one buffer with a hash index, so a merge line is three probes
// over views of the file instead of three byte conversions, three string copies and three lookups.
// Whatever these readers do not accept (a malformed entry, a duplicate, an unknown symbol, a BOM)
// makes them return false, and the checked readers of tokenizer_files.cpp read the files again to
// name the problem: the fast path decides nothing the checked one would decide differently.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/bpe_model.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "tokenizer/id_slots.hpp"

namespace genrepro {

// The header GPT-2's merges file starts with (and that its loaders skip).
inline constexpr std::string_view kMergesHeader = "#version:";

// The two sides of a merges line, "<left> <right>": both non-empty, one space between, no other.
std::optional<std::pair<std::string_view, std::string_view>> merge_line_sides(std::string_view line);

// The vocab's tokens as written in vocab.json (byte symbols, UTF-8), by id, with a lookup.
class VocabSymbols {
 public:
  bool empty() const { return begin_.empty(); }
  // The id of the token spelled `symbols`, or -1.
  int32_t id_of(std::string_view symbols) const;

 private:
  friend bool read_vocab_fast(std::string_view text, const ByteUnicodeTable& table, BpeModel& model,
                              VocabSymbols& symbols);
  std::string_view spelling(int32_t id) const { return std::string_view(text_).substr(begin_[id], length_[id]); }

  std::string text_;              // every key, decoded, back to back
  std::vector<uint32_t> begin_;   // id -> offset in text_
  std::vector<uint32_t> length_;  // id -> length in text_ (0: no key has this id yet)
  IdSlots slots_;
};

// Fills `model`'s tokens and `symbols` from vocab.json's text; false (both unspecified) unless the
// file is one flat JSON object of distinct tokens with distinct ids 0..N-1 and no BOM.
bool read_vocab_fast(std::string_view text, const ByteUnicodeTable& table, BpeModel& model, VocabSymbols& symbols);

// Fills `model.merges` from merges.txt's text; false (merges unspecified) unless the header is
// there and every later line is "left right" whose sides and whose merge are tokens, each pair once.
bool read_merges_fast(std::string_view text, const VocabSymbols& symbols, BpeModel& model);

}  // namespace genrepro
