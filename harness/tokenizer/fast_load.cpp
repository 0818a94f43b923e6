#include "tokenizer/fast_load.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include "util/utf8.hpp"

namespace genrepro {

namespace {

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// JSON text read left to right; every read returns false at anything it does not expect.
class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text) : s_(text) {}

  bool at_end() const { return i_ == s_.size(); }
  void skip_space() {
    while (i_ < s_.size() && is_json_space(s_[i_])) ++i_;
  }
  bool eat(char c) {
    if (i_ == s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }

  // A string after its opening quote, decoded to UTF-8 and appended to `out`.
  bool string_into(std::string& out) {
    for (;;) {
      const size_t run = i_;
      while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\\' && static_cast<uint8_t>(s_[i_]) >= 0x20) ++i_;
      out.append(s_.data() + run, i_ - run);
      if (i_ == s_.size() || static_cast<uint8_t>(s_[i_]) < 0x20) return false;
      if (s_[i_++] == '"') return true;
      if (!escape_into(out)) return false;
    }
  }

  // A non-negative integer as JSON writes one: no sign, no leading zero, no fraction or exponent.
  bool unsigned_integer(int64_t& value) {
    const size_t first = i_;
    uint64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      if (i_ - first == 18) return false;  // beyond any vocab; the checked reader words it
      v = v * 10 + static_cast<uint64_t>(s_[i_++] - '0');
    }
    if (i_ == first || (s_[first] == '0' && i_ - first > 1)) return false;
    if (i_ < s_.size() && (s_[i_] == '.' || s_[i_] == 'e' || s_[i_] == 'E')) return false;
    value = static_cast<int64_t>(v);
    return true;
  }

 private:
  bool escape_into(std::string& out) {
    if (i_ == s_.size()) return false;
    const char c = s_[i_++];
    switch (c) {
      case '"': out.push_back('"'); return true;
      case '\\': out.push_back('\\'); return true;
      case '/': out.push_back('/'); return true;
      case 'b': out.push_back('\b'); return true;
      case 'f': out.push_back('\f'); return true;
      case 'n': out.push_back('\n'); return true;
      case 'r': out.push_back('\r'); return true;
      case 't': out.push_back('\t'); return true;
      case 'u': break;
      default: return false;
    }
    const std::optional<char32_t> unit = hex4();
    if (!unit) return false;
    char32_t cp = *unit;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate first
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (!eat('\\') || !eat('u')) return false;
      const std::optional<char32_t> low = hex4();
      if (!low || *low < 0xDC00 || *low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (*low - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }

  std::optional<char32_t> hex4() {
    if (s_.size() - i_ < 4) return std::nullopt;
    char32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = hex_value(s_[i_++]);
      if (h < 0) return std::nullopt;
      v = v * 16 + static_cast<char32_t>(h);
    }
    return v;
  }

  std::string_view s_;
  size_t i_ = 0;
};

struct ScannedKey {
  uint32_t begin;
  uint32_t length;
  int64_t id;
};

// The keys (decoded into `keys_text`) and ids of a flat JSON object of integers, in file order.
bool scan_flat_object(std::string_view text, std::string& keys_text, std::vector<ScannedKey>& keys) {
  JsonCursor in(text);
  in.skip_space();
  if (!in.eat('{')) return false;
  in.skip_space();
  if (in.eat('}')) return false;  // empty: the checked reader says so
  for (;;) {
    if (!in.eat('"')) return false;
    const size_t begin = keys_text.size();
    if (!in.string_into(keys_text) || keys_text.size() > std::numeric_limits<uint32_t>::max()) return false;
    in.skip_space();
    if (!in.eat(':')) return false;
    in.skip_space();
    int64_t id = 0;
    if (!in.unsigned_integer(id)) return false;
    keys.push_back({static_cast<uint32_t>(begin), static_cast<uint32_t>(keys_text.size() - begin), id});
    in.skip_space();
    if (in.eat('}')) break;
    if (!in.eat(',')) return false;
    in.skip_space();
  }
  in.skip_space();
  return in.at_end();
}

}  // namespace

std::optional<std::pair<std::string_view, std::string_view>> merge_line_sides(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
      line.find(' ', space + 1) != std::string_view::npos)
    return std::nullopt;
  return std::make_pair(line.substr(0, space), line.substr(space + 1));
}

int32_t VocabSymbols::id_of(std::string_view symbols) const {
  return slots_.find(symbols, [this](int32_t id) { return spelling(id); });
}

bool read_vocab_fast(std::string_view text, const ByteUnicodeTable& table, BpeModel& model, VocabSymbols& symbols) {
  std::vector<ScannedKey> keys;
  symbols = VocabSymbols();
  symbols.text_.reserve(text.size());
  if (!scan_flat_object(text, symbols.text_, keys)) return false;
  const auto count = static_cast<int64_t>(keys.size());
  if (count > std::numeric_limits<int32_t>::max()) return false;
  model.reserve_tokens(static_cast<size_t>(count));
  symbols.begin_.assign(keys.size(), 0);
  symbols.length_.assign(keys.size(), 0);
  symbols.slots_.reset(keys.size());
  const auto spelling = [&symbols](int32_t id) { return symbols.spelling(id); };
  for (const ScannedKey& key : keys) {
    if (key.id >= count || symbols.length_[key.id] != 0 || key.length == 0) return false;
    const auto id = static_cast<int32_t>(key.id);
    symbols.begin_[id] = key.begin;
    symbols.length_[id] = key.length;
    std::optional<std::string> bytes = table.to_bytes(symbols.spelling(id), nullptr);
    // The byte symbols are a bijection, so a repeated key is a repeated byte string.
    if (!bytes || !model.add_token(id, std::move(*bytes)) || !symbols.slots_.insert(id, symbols.spelling(id), spelling))
      return false;
  }
  return true;
}

bool read_merges_fast(std::string_view text, const VocabSymbols& symbols, BpeModel& model) {
  if (symbols.empty() || text.substr(0, kMergesHeader.size()) != kMergesHeader) return false;
  model.merges.clear();
  model.merges.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  size_t pos = text.find('\n');
  pos = pos == std::string_view::npos ? text.size() : pos + 1;
  std::string merged;
  int32_t rank = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const auto sides = merge_line_sides(line);
    if (!sides) return false;
    const auto [left, right] = *sides;
    merged.assign(left).append(right);
    const int32_t left_id = symbols.id_of(left);
    const int32_t right_id = symbols.id_of(right);
    const int32_t merged_id = symbols.id_of(merged);
    if (left_id < 0 || right_id < 0 || merged_id < 0) return false;
    if (!model.merges.emplace(BpeModel::pair_key(left_id, right_id), BpeMerge{rank, merged_id}).second) return false;
    ++rank;
  }
  return true;
}

}  // namespace genrepro
