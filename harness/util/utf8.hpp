#pragma once
// UTF-8 helpers shared by the tokenizer and anything that shows token text to a person.
// Validation follows the Unicode Standard's table of well-formed byte sequences (Table 3-7):
// no overlongs, no surrogates, nothing above U+10FFFF.
#include <cstddef>
#include <string>
#include <string_view>

namespace genrepro {

inline constexpr char32_t kReplacementCharacter = 0xFFFD;

struct Utf8Char {
  char32_t code_point = 0;
  size_t length = 0;  // bytes used; for an invalid sequence, its maximal subpart (>= 1)
  bool valid = false;
};

// Decodes the character starting at `pos` (< text.size()). An ill-formed sequence reports the
// length of its "maximal subpart", the unit the Unicode Standard (and Python's and the WHATWG
// decoders) replace with one U+FFFD.
Utf8Char next_utf8_char(std::string_view text, size_t pos);

// Byte offset of the first ill-formed sequence, or npos if `text` is valid UTF-8.
size_t find_invalid_utf8(std::string_view text);

// `bytes` with each maximal ill-formed subpart replaced by U+FFFD: how text that may end in the
// middle of a character is shown to a person (bytes.decode("utf-8", errors="replace") in Python).
std::string replace_invalid_utf8(std::string_view bytes);

void append_utf8(std::string& out, char32_t code_point);

}  // namespace genrepro
