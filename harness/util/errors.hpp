#pragma once
// Typed errors. Every problem a user can cause (a bad file, flag, experiment or evidence file)
// is a genrepro::Error whose message is one line naming the file, the field or tensor, what was
// found, what is allowed, and the fix. The CLI catches them in one place, prints the line, and
// exits 2. Anything else that escapes is a bug (exit 3).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace genrepro {

// The most bytes an error line keeps: a message that quotes a value (a 3,000-entry control, a
// path, a JSON flag) keeps its head, where the file and field are named, and its tail, where the
// fix is, with " … " between.
inline constexpr std::size_t kMaxErrorLineBytes = 1000;

// `message` as one line a terminal and a log show whole: line breaks and other control bytes
// written as escapes (\n, \r, \t, \xNN), cut in the middle (at UTF-8 boundaries) past
// kMaxErrorLineBytes. Every Error's what() is this, so no value a user gave can split the line.
inline std::string one_line_message(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (const char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  if (out.size() <= kMaxErrorLineBytes) return out;
  const auto continuation = [&](std::size_t i) { return (static_cast<unsigned char>(out[i]) & 0xC0) == 0x80; };
  std::size_t head = kMaxErrorLineBytes * 2 / 3;
  while (head > 0 && continuation(head)) --head;
  std::size_t tail = out.size() - kMaxErrorLineBytes / 3;
  while (tail < out.size() && continuation(tail)) ++tail;
  return out.substr(0, head) + " \u2026 " + out.substr(tail);
}

// A value a message quotes (a flag's JSON, a control's list, a path): line breaks and the blanks
// around them as one space, and past `max_bytes` its head and "… (N bytes)", so the message
// stays one short line however long the value was.
inline std::string short_value(const std::string& value, std::size_t max_bytes = 160) {
  std::string flat;
  flat.reserve(std::min(value.size(), max_bytes + 8));
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '\n' || c == '\r') {
      while (!flat.empty() && (flat.back() == ' ' || flat.back() == '\t')) flat.pop_back();
      while (i + 1 < value.size() && (value[i + 1] == ' ' || value[i + 1] == '\t' || value[i + 1] == '\n' || value[i + 1] == '\r')) ++i;
      if (!flat.empty()) flat += ' ';
      continue;
    }
    flat += c;
    if (flat.size() > max_bytes + 4) break;
  }
  if (flat.size() <= max_bytes) return flat;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(flat[cut]) & 0xC0) == 0x80) --cut;
  return flat.substr(0, cut) + "\u2026 (" + std::to_string(value.size()) + " bytes)";
}

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(one_line_message(message)) {}
  explicit Error(const char* message) : Error(std::string(message)) {}
};

// config.json, model.safetensors, the model directory and its layout.
class ModelFileError : public Error {
 public:
  using Error::Error;
};

// vocab.json / encoder.json, merges.txt / vocab.bpe, and text that cannot be encoded.
class TokenizerError : public Error {
 public:
  using Error::Error;
};

// Experiment files and sampling parameters.
class SpecError : public Error {
 public:
  using Error::Error;
};

// Evidence and golden files.
class EvidenceError : public Error {
 public:
  using Error::Error;
};

// Numbers that left float32's range inside the loop (a distribution holding NaN or infinity):
// weights or sampling parameters the arithmetic cannot carry. Raised before the draw, naming the step.
class NumericsError : public Error {
 public:
  using Error::Error;
};

// A document about to be written holds a value its format cannot (NaN in JSON).
class JsonWriteError : public Error {
 public:
  using Error::Error;
};

// Command-line flags that parse but make no sense together.
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace genrepro
