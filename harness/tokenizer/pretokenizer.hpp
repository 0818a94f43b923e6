#pragma once
// GPT-2's pre-tokenizer: splits text into the pieces ("words") that BPE then encodes one by one.
//
// The pattern is OpenAI's encoder.py pattern
//     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// matched by PCRE2 in UTF + UCP mode. Two details decide ids on unusual text:
//  - The contractions are lower case only, as in the original: "'S" is not a contraction, it
//    becomes "'" (punctuation run) then "S" (letters).
//  - `\s` is spelled out as Unicode's White_Space property, which is what encoder.py's `regex`
//    module (and Hugging Face's GPT2Tokenizer, and tiktoken) mean by `\s`. PCRE2's own UCP `\s`
//    also matches U+180E, and JavaScript's (so gpt-tokenizer's) matches U+FEFF but not U+0085;
//    see docs/tokenizer.md.
// Letters and numbers come from PCRE2's Unicode tables (PCRE2 10.42: Unicode 14.0): code points
// assigned later are "unassigned" here and so fall into the punctuation alternative.
#include <memory>
#include <string_view>
#include <vector>

namespace genrepro {

// A piece of the input: text.substr(offset, length).
struct TextPiece {
  size_t offset = 0;
  size_t length = 0;
};

class Pretokenizer {
 public:
  Pretokenizer();  // compiles the pattern (and JIT-compiles it when PCRE2 has a JIT)
  Pretokenizer(Pretokenizer&&) noexcept;
  Pretokenizer& operator=(Pretokenizer&&) noexcept;
  ~Pretokenizer();

  // Appends the pieces of `text` to `pieces`, in order; together they cover `text` exactly.
  // `text` must be valid UTF-8 (the caller checks once; PCRE2 is then told not to re-check on
  // every match, which would make splitting quadratic). Safe to call from several threads.
  void split(std::string_view text, std::vector<TextPiece>& pieces) const;

  // The pattern as compiled, for documentation and error messages.
  static const char* pattern();

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace genrepro
