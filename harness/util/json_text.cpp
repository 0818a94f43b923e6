#include "util/json_text.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "util/utf8.hpp"

namespace genrepro {

namespace {

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

std::string too_large(uint64_t max_bytes) {
  return "more than the " + std::to_string(max_bytes) + " bytes allowed; is this the right file?";
}

}  // namespace

JsonParseOutcome parse_json_text(std::string_view text, int max_depth) {
  return parse_checked<nlohmann::json>(text, max_depth);
}

ParsedJson<OrderedJson> parse_ordered_json_text(std::string_view text, int max_depth) {
  return parse_checked<OrderedJson>(text, max_depth);
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
  // The reported size only lets a plainly too large file be refused unread; the read below
  // enforces the bound itself.
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > max_bytes) {
      problem = "file is " + std::to_string(size) + " bytes, " + too_large(max_bytes);
      return false;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  // One byte more than allowed is enough to know the file is too large.
  const uint64_t limit = max_bytes < UINT64_MAX ? max_bytes + 1 : max_bytes;
  constexpr uint64_t kChunkBytes = 1 << 20;
  std::string text;
  while (text.size() < limit) {
    const size_t have = text.size();
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, limit - have));
    text.resize(have + want);
    in.read(&text[have], static_cast<std::streamsize>(want));
    text.resize(have + static_cast<size_t>(in.gcount()));
    if (static_cast<size_t>(in.gcount()) < want) break;  // end of file, or an error (below)
  }
  if (in.bad()) {
    problem = std::string("read error: ") + std::strerror(errno);
    return false;
  }
  if (text.size() > max_bytes) {
    problem = "file holds " + too_large(max_bytes);
    return false;
  }
  content = std::move(text);
  return true;
}

}  // namespace genrepro
