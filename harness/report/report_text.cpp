#include "report/report_text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "util/utf8.hpp"

namespace genrepro {

namespace {

// The one gate between numbers and report text (every formatter below prints through it):
// evidence may hold NaN and infinities (docs/evidence-format.md), and a writer must never emit
// "nan" or "inf" where a reader expects a number: such a value prints as kNotANumber instead.
std::string print_number(char conversion, int precision, double v) {
  if (!std::isfinite(v)) return kNotANumber;
  const char format[] = {'%', '.', '*', conversion, '\0'};
  char buf[64];
  std::snprintf(buf, sizeof buf, format, precision, v);
  return buf;
}


constexpr char32_t kControlPicturesBase = 0x2400;  // U+2400 SYMBOL FOR NULL .. U+241F
constexpr char32_t kSymbolForDelete = 0x2421;
constexpr char32_t kNewlineSymbol = 0x21B5;  // ↵
constexpr char32_t kTabSymbol = 0x21E5;      // ⇥
constexpr double kSmallestFixedProb = 1e-4;  // below this, 4 decimals would print 0.0000

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
    const Utf8Char ch = next_utf8_char(raw, i);
    i += ch.length;
    if (!ch.valid) {
      append_utf8(out, kReplacementCharacter);  // one per maximal ill-formed subpart, as Python shows it
      continue;
    }
    const char32_t c = ch.code_point;
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
  return p != 0 && std::fabs(p) < kSmallestFixedProb ? print_number('e', 2, p) : print_number('f', 4, p);
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

std::string numbers_gated(const std::string& sentence) {
  const auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  std::size_t i = 0;
  while (i < sentence.size()) {
    if (!word_char(sentence[i])) {
      out += sentence[i++];
      continue;
    }
    std::size_t end = i;
    while (end < sentence.size() && word_char(sentence[end])) ++end;
    const std::string word = sentence.substr(i, end - i);
    if (word == "nan" || word == "inf") {
      if (!out.empty() && out.back() == '-') out.pop_back();
      out += kNotANumber;
    } else {
      out += word;
    }
    i = end;
  }
  return out;
}

std::string format_param(double v) { return print_number('g', 6, v); }

std::string format_fixed(double v, int decimals) {
  const std::string text = print_number('f', decimals, v);
  // "-0.0" and "0.0" are the same coordinate; print one of them so output does not depend on
  // the sign of a rounding error.
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) return text.substr(1);
  return text;
}

}  // namespace genrepro
