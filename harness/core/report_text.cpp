#include "core/report_text.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace genrepro {

namespace {

constexpr char32_t kReplacementChar = 0xFFFD;
constexpr char32_t kControlPicturesBase = 0x2400;  // U+2400 SYMBOL FOR NULL .. U+241F
constexpr char32_t kSymbolForDelete = 0x2421;
constexpr char32_t kNewlineSymbol = 0x21B5;  // ↵
constexpr char32_t kTabSymbol = 0x21E5;      // ⇥
constexpr double kSmallestFixedProb = 1e-4;  // below this, 4 decimals would print 0.0000

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

// Decodes one well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF). Returns its length, or 0 if the byte at s[i] does not start one.
size_t decode_utf8(const std::string& s, size_t i, char32_t& out) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  size_t len = 0;
  char32_t c = 0;
  char32_t min = 0;
  if (b0 < 0x80) {
    out = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, c = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, c = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, c = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  out = c;
  return len;
}

std::string escape_markup(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string visible_text(const std::string& raw, bool keep_layout) {
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size();) {
    char32_t c = 0;
    const size_t len = decode_utf8(raw, i, c);
    if (len == 0) {
      append_utf8(out, kReplacementChar);
      ++i;
      continue;
    }
    i += len;
    if (c == '\n') {
      if (keep_layout) out += '\n'; else append_utf8(out, kNewlineSymbol);
    } else if (c == '\t') {
      if (keep_layout) out += '\t'; else append_utf8(out, kTabSymbol);
    } else if (c < 0x20) {
      append_utf8(out, kControlPicturesBase + c);
    } else if (c == 0x7F) {
      append_utf8(out, kSymbolForDelete);
    } else if (c >= 0x80 && c <= 0x9F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
      out += buf;
    } else {
      append_utf8(out, c);
    }
  }
  return out;
}

std::string quoted_token(const std::string& raw) {
  std::string out = "\"";
  for (char c : visible_text(raw, false)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string html_escape(const std::string& text) { return escape_markup(text); }

std::string xml_escape(const std::string& text) { return escape_markup(text); }

std::string markdown_inline(const std::string& text) {
  // Characters with a meaning anywhere inside a line (code, emphasis, links, raw HTML, table
  // cells, strikethrough, GitHub's $math$). Line-start syntax (#, -, 1.) cannot occur: callers
  // never start a line with inline text from the evidence.
  static constexpr const char* kMarkdownPunctuation = "\\`*_[]<>|~$";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c != '\0' && std::strchr(kMarkdownPunctuation, c) != nullptr) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string markdown_fence(const std::string& text) {
  size_t longest = 0;
  size_t run = 0;
  for (char c : text) {
    run = (c == '`') ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  const size_t kShortestFence = 3;
  return std::string(longest + 1 > kShortestFence ? longest + 1 : kShortestFence, '`');
}

std::string format_prob(double p) {
  char buf[32];
  if (p != 0 && std::fabs(p) < kSmallestFixedProb) {
    std::snprintf(buf, sizeof buf, "%.2e", p);
  } else {
    std::snprintf(buf, sizeof buf, "%.4f", p);
  }
  return buf;
}

std::string format_count(int64_t n) {
  const std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string format_param(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  // "-0.0" and "0.0" are the same coordinate; print one of them so output does not depend on
  // the sign of a rounding error.
  if (std::strspn(buf, "-0.") == std::strlen(buf) && buf[0] == '-') return buf + 1;
  return buf;
}

}  // namespace genrepro
