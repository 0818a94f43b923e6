#include "util/json_text.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "util/errors.hpp"
#include "util/utf8.hpp"

namespace genrepro {

namespace {

std::string hex_byte(unsigned char b) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 0xf];
}

}  // namespace

std::string underflow_problem(std::string_view token) {
  const size_t exponent = token.find_first_of("eE");
  const std::string_view mantissa = token.substr(0, exponent);
  if (mantissa.find_first_of("123456789") == std::string_view::npos) return {};  // written as zero
  if (exponent == std::string_view::npos && mantissa.find('.') == std::string_view::npos) return {};  // an integer
  // Below 4.9e-324 needs a negative exponent or about 300 leading zeros; strtod only then, since
  // evidence holds hundreds of thousands of numbers.
  const bool negative_exponent = exponent != std::string_view::npos && exponent + 1 < token.size() && token[exponent + 1] == '-';
  if (!negative_exponent && mantissa.size() < 300) return {};
  const std::string copy(token);
  const double v = std::strtod(copy.c_str(), nullptr);
  // A subnormal keeps its value (evidence round-trips every double); only a value lost to 0 is refused.
  if (v != 0) return {};
  return "the number " + copy + " is too small for a double (it would be read as 0); write 0, or a number whose " +
         "magnitude is at least 4.9406564584124654e-324";
}

namespace {

// Returns a problem line, or empty: invalid UTF-8 anywhere, nesting deeper than max_depth outside
// strings, or a number that underflows. One linear pass, no recursion.
std::string prescan(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size();) {
    const Utf8Char ch = next_utf8_char(text, i);
    if (!ch.valid) {
      return line_column(text, i) + ": invalid UTF-8 (byte " + hex_byte(static_cast<unsigned char>(text[i])) +
             "); save the file as UTF-8";
    }
    if (ch.length == 1) {
      const char c = text[i];
      if (in_string) {
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        size_t end = i;
        while (end < text.size() && std::strchr("+-.0123456789eE", text[end]) != nullptr && text[end] != '\0') ++end;
        const std::string problem = underflow_problem(text.substr(i, end - i));
        if (!problem.empty()) return line_column(text, i) + ": " + problem;
        i = end;
        continue;
      } else if (c == '[' || c == '{') {
        if (++depth > max_depth) {
          return line_column(text, i) + ": JSON nested deeper than " + std::to_string(max_depth) +
                 " levels; this file cannot be an experiment or evidence file";
        }
      } else if (c == ']' || c == '}') {
        --depth;  // unbalanced brackets are left to the parser, which names them
      }
    }
    i += ch.length;
  }
  return {};
}

// Where the parser is, for naming duplicate keys: one frame per open object or array.
struct Frame {
  bool is_object = false;
  std::set<std::string> keys;
  std::string key;
  long index = -1;
};

std::string frame_path(const std::vector<Frame>& frames) {
  std::string path;
  for (const Frame& f : frames) {
    if (f.is_object) {
      if (f.key.empty() && &f == &frames.back()) continue;
      path += (path.empty() ? "" : ".") + f.key;
    } else if (f.index >= 0) {
      path += "[" + std::to_string(f.index) + "]";
    }
  }
  return path;
}

struct DuplicateKey {
  std::string path;
};

// nlohmann's messages start with "[json.exception.parse_error.101] "; the rest already names
// the line and column. Newlines are folded so the error stays one line.
std::string parser_message(const nlohmann::json::exception& e) {
  std::string msg = e.what();
  if (!msg.empty() && msg[0] == '[') {
    const auto close = msg.find("] ");
    if (close != std::string::npos) msg = msg.substr(close + 2);
  }
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return msg;
}

}  // namespace

std::string line_column(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

namespace {

// Both parses share every check; Json is nlohmann::json (keys sorted) or OrderedJson.
template <class Json>
ParsedJson<Json> parse_checked(std::string_view text, int max_depth) {
  ParsedJson<Json> out;
  out.problem = prescan(text, max_depth);
  if (!out.ok()) return out;

  std::vector<Frame> frames;
  using Event = typename Json::parse_event_t;
  const auto track = [&frames](int, Event event, Json& parsed) -> bool {
    const auto count_element = [&frames] {
      if (!frames.empty() && !frames.back().is_object) ++frames.back().index;
    };
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        count_element();
        frames.push_back(Frame{event == Event::object_start, {}, {}, -1});
        break;
      case Event::key: {
        Frame& top = frames.back();
        top.key = parsed.template get<std::string>();
        if (!top.keys.insert(top.key).second) throw DuplicateKey{frame_path(frames)};
        break;
      }
      case Event::value:
        count_element();
        break;
      case Event::object_end:
      case Event::array_end:
        frames.pop_back();
        break;
    }
    return true;
  };
  try {
    out.value = Json::parse(text.begin(), text.end(), track);
  } catch (const DuplicateKey& d) {
    out.problem = d.path + ": key given twice; an object may name each key once";
  } catch (const nlohmann::json::exception& e) {
    out.problem = "invalid JSON: " + parser_message(e);
  }
  return out;
}

}  // namespace

namespace {

// The first non-finite number in `j`, depth first, as "path: value"; empty when there is none.
template <class Json>
std::string first_non_number(const Json& j, const std::string& path) {
  if (j.is_number_float()) {
    const double v = j.template get<double>();
    if (std::isfinite(v)) return {};
    return (path.empty() ? std::string("(top level)") : path) + ": " + (std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
  }
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string found = first_non_number(it.value(), path.empty() ? it.key() : path + "." + it.key());
      if (!found.empty()) return found;
    }
  }
  if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) {
      std::string found = first_non_number(j[i], path + "[" + std::to_string(i) + "]");
      if (!found.empty()) return found;
    }
  }
  return {};
}

template <class Json>
std::string document_text(const Json& j, int indent) {
  const std::string found = first_non_number(j, "");
  if (!found.empty())
    throw JsonWriteError("cannot write " + found + ": JSON has no NaN or infinity; the value came from inputs outside " +
                         "their documented ranges (docs/validation.md)");
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string json_document_text(const OrderedJson& j, int indent) { return document_text(j, indent); }
std::string json_document_text(const nlohmann::json& j, int indent) { return document_text(j, indent); }

JsonParseOutcome parse_json_text(std::string_view text, int max_depth) {
  return parse_checked<nlohmann::json>(text, max_depth);
}

ParsedJson<OrderedJson> parse_ordered_json_text(std::string_view text, int max_depth) {
  return parse_checked<OrderedJson>(text, max_depth);
}

}  // namespace genrepro
