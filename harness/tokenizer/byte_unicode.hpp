#pragma once
// GPT-2's byte <-> unicode table (bytes_to_unicode() in OpenAI's encoder.py).
//
// Byte-level BPE works on raw bytes, but vocab.json and merges.txt must be printable text, so
// every byte is written as one visible code point: the 188 printable Latin-1 bytes ('!'..'~',
// '¡'..'¬', '®'..'ÿ') stand for themselves and the other 68 (controls, space, DEL, NBSP, soft
// hyphen) are moved to U+0100.. in byte order, so the space 0x20 is 'Ġ' (U+0120) and '\n' is 'Ċ'.
// The tokenizer converts the files' text back to bytes once at load time and works on bytes.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace genrepro {

class ByteUnicodeTable {
 public:
  ByteUnicodeTable();

  // The code point that stands for `byte` in vocab.json / merges.txt.
  char32_t code_point(uint8_t byte) const { return byte_to_code_point_[byte]; }

  // The byte a code point stands for, or nullopt if it is not one of the 256 byte symbols.
  std::optional<uint8_t> byte(char32_t code_point) const;

  // Converts a vocab/merges token (UTF-8 text of byte symbols) to the raw bytes it stands for.
  // On failure returns nullopt and sets *bad_code_point to the first code point that is not a
  // byte symbol (or U+FFFD when the text itself is not valid UTF-8).
  std::optional<std::string> to_bytes(std::string_view symbols, char32_t* bad_code_point) const;

  // The inverse: raw bytes to the UTF-8 text of their byte symbols (how vocab.json spells them).
  std::string to_symbols(std::string_view bytes) const;

 private:
  std::array<char32_t, 256> byte_to_code_point_{};
  // Every byte symbol is below U+0100 + 68; index = code point.
  static constexpr char32_t kSymbolLimit = 0x100 + 68;
  std::array<int16_t, kSymbolLimit> code_point_to_byte_{};
};

}  // namespace genrepro
