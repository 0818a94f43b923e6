#include "util/json_text.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace genrepro {

namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 if it is not valid UTF-8 (RFC 3629:
// no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return n;
}

std::string hex_byte(unsigned char b) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  return std::string("0x") + kDigits[b >> 4] + kDigits[b & 0xf];
}

// Returns a problem line, or empty: invalid UTF-8 anywhere, or nesting deeper than max_depth
// outside strings. One linear pass, no recursion.
std::string prescan(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text, i);
    if (n == 0) {
      return line_column(text, i) + ": invalid UTF-8 (byte " + hex_byte(static_cast<unsigned char>(text[i])) +
             "); save the file as UTF-8";
    }
    if (n == 1) {
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
      } else if (c == '[' || c == '{') {
        if (++depth > max_depth) {
          return line_column(text, i) + ": JSON nested deeper than " + std::to_string(max_depth) +
                 " levels; this file cannot be an experiment or evidence file";
        }
      } else if (c == ']' || c == '}') {
        --depth;  // unbalanced brackets are left to the parser, which names them
      }
    }
    i += n;
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

JsonParseOutcome parse_json_text(std::string_view text, int max_depth) {
  JsonParseOutcome out;
  out.problem = prescan(text, max_depth);
  if (!out.ok()) return out;

  std::vector<Frame> frames;
  using Event = nlohmann::json::parse_event_t;
  const auto track = [&frames](int, Event event, nlohmann::json& parsed) -> bool {
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
        top.key = parsed.get<std::string>();
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
    out.value = nlohmann::json::parse(text.begin(), text.end(), track);
  } catch (const DuplicateKey& d) {
    out.problem = d.path + ": key given twice; an object may name each key once";
  } catch (const nlohmann::json::exception& e) {
    out.problem = "invalid JSON: " + parser_message(e);
  }
  return out;
}

bool read_text_file(const std::string& path, std::string& content, std::string& problem, uint64_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    problem = "no such file";
    return false;
  }
  if (std::filesystem::is_directory(status)) {
    problem = "is a directory, not a file";
    return false;
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    problem = "file is " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
              " allowed; is this the right file?";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    problem = std::string("read error: ") + std::strerror(errno);
    return false;
  }
  content = buffer.str();
  return true;
}

}  // namespace genrepro
