#include "cli/logits_rows.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <istream>
#include <optional>

#include "util/bounded_read.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

constexpr const char* kAllowedJsonl = "one JSON array of finite numbers per line, every line the same length";
constexpr const char* kNpyMagic = "\x93NUMPY";
constexpr size_t kNpyMagicBytes = 6;

// A token as messages quote it: at most 40 bytes, control and non-ASCII bytes as '?' (the input
// may be any bytes, and the message is one line of text).
std::string shown(std::string_view token) {
  constexpr size_t kShownChars = 40;
  std::string s(token.substr(0, kShownChars));
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  if (token.size() > kShownChars) s += "...";
  return "'" + s + "'";
}

// ---------------------------------------------------------------- JSON lines

// Where a problem is, for messages: "logits.jsonl: row 2 (line 3)".
struct LineAt {
  const std::string& name;
  size_t row;
  size_t line;
  std::string where() const { return name + ": row " + std::to_string(row) + " (line " + std::to_string(line) + ")"; }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
bool is_json_number(std::string_view t) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > start;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (i < t.size() && t[i] == '0') ++i;
  else if (!digits()) return false;
  if (i < t.size() && t[i] == '.' && (++i, !digits())) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

// What a token that is no JSON number is, in words ("NaN", "infinity") for the message.
std::string not_a_number(std::string_view token) {
  std::string bare(token.substr(!token.empty() && (token[0] == '-' || token[0] == '+') ? 1 : 0));
  for (char& c : bare) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (bare == "nan") return shown(token) + " is NaN";
  if (bare == "inf" || bare == "infinity") return shown(token) + " is infinity";
  return shown(token) + " is not a number";
}

// One element: the number rounded to float32, or the problem.
float element_value(std::string_view token, const LineAt& at, size_t element) {
  const auto fail = [&](const std::string& what) {
    return UsageError(at.where() + ", element " + std::to_string(element) + ": " + what +
                      "; allowed: a finite number within float32's range (|x| <= 3.4028235e+38)");
  };
  if (!is_json_number(token)) throw fail(not_a_number(token));
  double value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  const float rounded = static_cast<float>(value);
  if (error != std::errc() || end != token.data() + token.size() || !std::isfinite(rounded))
    throw fail(shown(token) + " is beyond float32's range");
  return rounded;
}

// The element token starting at `i`: a string literal whole, else up to the next separator.
std::string_view next_token(std::string_view line, size_t i) {
  size_t j = i;
  if (line[j] == '"') {
    for (++j; j < line.size() && line[j] != '"'; ++j)
      if (line[j] == '\\') ++j;
    return line.substr(i, std::min(j + 1, line.size()) - i);
  }
  while (j < line.size() && line[j] != ',' && line[j] != ']' && !is_space(line[j])) ++j;
  return line.substr(i, std::max<size_t>(j - i, 1));
}

std::vector<float> parse_row(std::string_view line, const LineAt& at) {
  const auto fail = [&](const std::string& what) {
    return UsageError(at.where() + ": " + what + "; allowed: " + kAllowedJsonl);
  };
  size_t i = 0;
  const auto skip = [&] {
    while (i < line.size() && is_space(line[i])) ++i;
  };
  skip();
  if (line[i] != '[') throw fail(shown(line.substr(i)) + " is not a JSON array");
  ++i;
  skip();
  std::vector<float> row;
  if (i < line.size() && line[i] == ']') throw fail("the array is empty (no logits)");
  while (true) {
    skip();
    if (i >= line.size()) throw fail("the array is not closed with ']'");
    const std::string_view token = next_token(line, i);
    row.push_back(element_value(token, at, row.size()));
    i += token.size();
    skip();
    if (i < line.size() && line[i] == ',') {
      ++i;
      continue;
    }
    if (i < line.size() && line[i] == ']') break;
    throw fail(i < line.size() ? "after element " + std::to_string(row.size() - 1) + " comes " + shown(line.substr(i, 1)) + ", not ',' or ']'"
                               : "the array is not closed with ']'");
  }
  ++i;
  skip();
  if (i < line.size()) throw fail("text after the array: " + shown(line.substr(i)));
  return row;
}

LogitsRows parse_jsonl(const std::string& text, const std::string& name) {
  LogitsRows out;
  out.format = "jsonl";
  size_t start = 0, line_number = 0, first_line = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    ++line_number;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank lines separate nothing
    const LineAt at{name, out.rows.size(), line_number};
    std::vector<float> row = parse_row(line, at);
    if (!out.rows.empty() && row.size() != out.rows.front().size())
      throw UsageError(at.where() + ": " + std::to_string(row.size()) + " logits, where row 0 (line " + std::to_string(first_line) +
                       ") has " + std::to_string(out.rows.front().size()) + "; allowed: " + kAllowedJsonl + " (one vocabulary)");
    if (out.rows.empty()) first_line = line_number;
    out.rows.push_back(std::move(row));
  }
  if (out.rows.empty())
    throw UsageError(name + ": holds no rows; allowed: " + std::string(kAllowedJsonl) + ", or a .npy float32 array");
  return out;
}

// ---------------------------------------------------------------- .npy

constexpr const char* kAllowedNpy = "dtype '<f4' (little-endian float32), C order, shape (V,) or (N, V), as numpy.save writes them";

// The value of `key` in the header's Python dict literal: the text up to the next top-level ','
// or '}' (a tuple's commas are inside its parentheses).
std::optional<std::string> header_value(const std::string& header, const std::string& key) {
  for (const char quote : {'\'', '"'}) {
    const std::string quoted = std::string(1, quote) + key + quote;
    size_t at = header.find(quoted);
    if (at == std::string::npos) continue;
    at = header.find(':', at + quoted.size());
    if (at == std::string::npos) return std::nullopt;
    size_t end = at + 1;
    int depth = 0;
    for (; end < header.size(); ++end) {
      const char c = header[end];
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (depth == 0 && (c == ',' || c == '}')) break;
    }
    std::string value = header.substr(at + 1, end - at - 1);
    const size_t first = value.find_first_not_of(" \t");
    const size_t last = value.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : value.substr(first, last - first + 1);
  }
  return std::nullopt;
}

// "(3, 4)" -> {3, 4}; "(4,)" -> {4}; "()" -> {}. Empty optional when it is no tuple of integers.
std::optional<std::vector<uint64_t>> shape_of(const std::string& text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return std::nullopt;
  std::vector<uint64_t> dims;
  const std::string inner = text.substr(1, text.size() - 2);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (inner[i] == ' ' || inner[i] == ',')) ++i;
    if (i >= inner.size()) break;
    uint64_t d = 0;
    const auto [end, error] = std::from_chars(inner.data() + i, inner.data() + inner.size(), d);
    if (error != std::errc() || end == inner.data() + i) return std::nullopt;
    dims.push_back(d);
    i = static_cast<size_t>(end - inner.data());
    if (i < inner.size() && inner[i] == 'L') ++i;  // Python 2's long suffix
  }
  return dims;
}

// An unsigned little-endian integer of `width` bytes (the .npy header length, a float's bits).
uint32_t little_endian(const char* bytes, size_t width) {
  uint32_t v = 0;
  for (size_t k = 0; k < width; ++k) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[k])) << (8 * k);
  return v;
}

LogitsRows parse_npy(const std::string& bytes, const std::string& name) {
  const auto fail = [&](const std::string& what) { return UsageError(name + ": " + what + "; allowed: " + kAllowedNpy); };
  if (bytes.size() < kNpyMagicBytes + 4) throw fail(".npy header is cut short");
  const int major = static_cast<unsigned char>(bytes[kNpyMagicBytes]);
  if (major < 1 || major > 3) throw fail(".npy format version " + std::to_string(major) + " is unknown (versions 1 to 3 are)");
  const size_t length_width = major == 1 ? 2 : 4;
  const size_t header_start = kNpyMagicBytes + 2 + length_width;
  if (bytes.size() < header_start) throw fail(".npy header is cut short");
  const size_t header_length = little_endian(bytes.data() + kNpyMagicBytes + 2, length_width);
  if (bytes.size() < header_start + header_length) throw fail(".npy header is cut short");
  const std::string header = bytes.substr(header_start, header_length);

  const std::optional<std::string> descr = header_value(header, "descr");
  const std::optional<std::string> fortran = header_value(header, "fortran_order");
  const std::optional<std::string> shape_text = header_value(header, "shape");
  if (!descr || !fortran || !shape_text) throw fail(".npy header " + shown(header) + " lacks descr, fortran_order or shape");
  if (*descr != "'<f4'" && *descr != "\"<f4\"") throw fail("dtype " + *descr + " is not allowed");
  if (*fortran != "False") throw fail("fortran_order " + *fortran + " is not allowed");
  const std::optional<std::vector<uint64_t>> shape = shape_of(*shape_text);
  if (!shape || shape->empty() || shape->size() > 2) throw fail("shape " + *shape_text + " is not allowed");
  const uint64_t rows = shape->size() == 2 ? (*shape)[0] : 1;
  const uint64_t width = shape->back();
  if (rows == 0) throw fail("shape " + *shape_text + " holds no rows");
  if (width == 0) throw fail("shape " + *shape_text + ": the rows are empty (no logits)");
  const size_t data_start = header_start + header_length;
  const uint64_t data_bytes = bytes.size() - data_start;
  if (width > data_bytes / 4 || rows > data_bytes / 4 / width || rows * width * 4 != data_bytes)
    throw fail("the data is " + std::to_string(data_bytes) + " bytes; shape " + *shape_text + " of float32 needs " +
               (width > UINT64_MAX / 4 / rows ? std::string("more") : std::to_string(rows * width * 4)));

  LogitsRows out;
  out.format = "npy";
  const char* data = bytes.data() + data_start;
  for (uint64_t r = 0; r < rows; ++r) {
    std::vector<float> row(width);
    for (uint64_t e = 0; e < width; ++e) {
      const uint32_t bits = little_endian(data + 4 * (r * width + e), 4);
      float v;
      std::memcpy(&v, &bits, sizeof v);
      if (!std::isfinite(v))
        throw UsageError(name + ": row " + std::to_string(r) + ", element " + std::to_string(e) + ": " +
                         (std::isnan(v) ? "NaN" : "infinity") + " is not allowed; allowed: finite float32 logits");
      row[e] = v;
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace

LogitsRows parse_logits(const std::string& bytes, const std::string& name) {
  if (bytes.compare(0, kNpyMagicBytes, kNpyMagic, kNpyMagicBytes) == 0) return parse_npy(bytes, name);
  return parse_jsonl(bytes, name);
}

LogitsRows read_logits(const std::string& path, std::istream& in) {
  const bool from_stdin = path == kStdinPath;
  const std::string name = from_stdin ? "<stdin>" : path;
  const BoundedRead read =
      from_stdin ? read_bounded(in, kMaxLogitsInputBytes, Expect::bytes) : read_bounded(path, kMaxLogitsInputBytes, Expect::bytes);
  if (!read.ok())
    throw UsageError(name + ": " + read.problem + "; allowed: a JSON-lines or .npy file of logits (- for standard input)");
  return parse_logits(read.text, name);
}

}  // namespace genrepro::cli
