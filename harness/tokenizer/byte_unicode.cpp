#include "tokenizer/byte_unicode.hpp"

#include "util/utf8.hpp"

namespace genrepro {

namespace {

// The bytes GPT-2 keeps as themselves: printable ASCII and the printable Latin-1 ranges.
bool is_printable_as_itself(int b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

// Code point where the first non-printable byte is moved to (encoder.py: 2**8 + n).
constexpr char32_t kFirstMovedCodePoint = 0x100;

}  // namespace

ByteUnicodeTable::ByteUnicodeTable() {
  code_point_to_byte_.fill(-1);
  char32_t next_moved = kFirstMovedCodePoint;
  for (int b = 0; b < 256; ++b) {
    const char32_t cp = is_printable_as_itself(b) ? static_cast<char32_t>(b) : next_moved++;
    byte_to_code_point_[b] = cp;
    code_point_to_byte_[cp] = static_cast<int16_t>(b);
  }
}

std::optional<uint8_t> ByteUnicodeTable::byte(char32_t code_point) const {
  if (code_point >= kSymbolLimit || code_point_to_byte_[code_point] < 0) return std::nullopt;
  return static_cast<uint8_t>(code_point_to_byte_[code_point]);
}

std::optional<std::string> ByteUnicodeTable::to_bytes(std::string_view symbols,
                                                      char32_t* bad_code_point) const {
  std::string bytes;
  bytes.reserve(symbols.size());
  size_t pos = 0;
  while (pos < symbols.size()) {
    const Utf8Char ch = next_utf8_char(symbols, pos);
    if (!ch.valid) {
      if (bad_code_point) *bad_code_point = kReplacementCharacter;
      return std::nullopt;
    }
    const std::optional<uint8_t> b = byte(ch.code_point);
    if (!b) {
      if (bad_code_point) *bad_code_point = ch.code_point;
      return std::nullopt;
    }
    bytes.push_back(static_cast<char>(*b));
    pos += ch.length;
  }
  return bytes;
}

std::string ByteUnicodeTable::to_symbols(std::string_view bytes) const {
  std::string out;
  for (const char c : bytes) append_utf8(out, byte_to_code_point_[static_cast<uint8_t>(c)]);
  return out;
}

}  // namespace genrepro
