#include "util/utf8.hpp"

#include <cstdint>

namespace genrepro {

namespace {

// Continuation bytes are 10xxxxxx; the lead byte narrows the allowed range of the second byte
// (Table 3-7) so that overlongs, surrogates and code points above U+10FFFF are rejected.
struct LeadRule {
  int length;          // total bytes, 0 for a byte that cannot start a character
  uint8_t second_min;  // allowed range of the second byte
  uint8_t second_max;
};

LeadRule lead_rule(uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b >= 0xE1 && b <= 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

constexpr uint8_t kContinuationMask = 0x3F;

}  // namespace

Utf8Char next_utf8_char(std::string_view text, size_t pos) {
  const auto byte_at = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte_at(pos);
  const LeadRule rule = lead_rule(lead);
  if (rule.length == 1) return {lead, 1, true};
  if (rule.length == 0) return {0, 1, false};
  // Lead byte payload: 5, 4 or 3 bits for 2-, 3- and 4-byte sequences.
  char32_t cp = lead & (0x7F >> rule.length);
  for (int i = 1; i < rule.length; ++i) {
    const size_t at = pos + i;
    if (at >= text.size()) return {0, static_cast<size_t>(i), false};
    const uint8_t b = byte_at(at);
    const uint8_t lo = i == 1 ? rule.second_min : 0x80;
    const uint8_t hi = i == 1 ? rule.second_max : 0xBF;
    if (b < lo || b > hi) return {0, static_cast<size_t>(i), false};
    cp = (cp << 6) | (b & kContinuationMask);
  }
  return {cp, static_cast<size_t>(rule.length), true};
}

size_t find_invalid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const Utf8Char ch = next_utf8_char(text, pos);
    if (!ch.valid) return pos;
    pos += ch.length;
  }
  return std::string_view::npos;
}

std::string replace_invalid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const Utf8Char ch = next_utf8_char(bytes, pos);
    if (ch.valid) {
      out.append(bytes.substr(pos, ch.length));
    } else {
      append_utf8(out, kReplacementCharacter);
    }
    pos += ch.length;
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & kContinuationMask)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & kContinuationMask)));
    out.push_back(static_cast<char>(0x80 | (cp & kContinuationMask)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & kContinuationMask)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & kContinuationMask)));
    out.push_back(static_cast<char>(0x80 | (cp & kContinuationMask)));
  }
}

}  // namespace genrepro
