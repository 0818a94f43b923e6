#include "tokenizer/tokenizer_files.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "tokenizer/fast_load.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/text_excerpt.hpp"
#include "util/utf8.hpp"

namespace genrepro {

namespace fs = std::filesystem;

namespace {


// Longest excerpt of a bad token or line quoted in an error message.
constexpr size_t kMaxQuotedTokenChars = 40;

const char* const kVocabNames[] = {"vocab.json", "encoder.json"};
const char* const kMergesNames[] = {"merges.txt", "vocab.bpe"};

std::string shown_quoted(std::string_view text) { return quoted_excerpt(text, kMaxQuotedTokenChars); }

std::string code_point_name(char32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

std::string read_whole_file(const std::string& path, const char* what) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    throw TokenizerError(std::string(what) + " '" + path + "' does not exist; pass --model DIR with GPT-2's " +
                         "vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  }
  if (fs::is_directory(status)) {
    throw TokenizerError(std::string(what) + " '" + path + "' is not a regular file; pass the path of GPT-2's " +
                         "vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  }
  BoundedRead read = read_bounded(path, kMaxTokenizerFileBytes);
  if (!read.ok())
    throw TokenizerError(std::string(what) + " '" + path + "': " + read.problem +
                         " (GPT-2's tokenizer files are about 1 MB); check the path and its permissions");
  return std::move(read.text);
}

std::string type_name(const nlohmann::json& j) {
  if (j.is_number_float()) return "a fractional number";
  if (j.is_number()) return "an integer";
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  return std::string("a ") + j.type_name();
}

// Parses vocab.json, reporting keys that appear twice (nlohmann would silently keep the last).
nlohmann::json parse_vocab_json(const std::string& path, const std::string& text) {
  std::string duplicate_key;
  std::unordered_set<std::string> keys;
  const nlohmann::json::parser_callback_t note_duplicates =
      [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        if (event == nlohmann::json::parse_event_t::key && depth == 1 && duplicate_key.empty() &&
            !keys.insert(parsed.get<std::string>()).second) {
          duplicate_key = parsed.get<std::string>();
        }
        return true;
      };
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(text, note_duplicates);
  } catch (const nlohmann::json::parse_error& e) {
    throw TokenizerError("vocab file '" + path + "' is not valid JSON (error at byte " + std::to_string(e.byte) +
                         "); expected GPT-2's vocab.json, one object {\"token\": id, ...}");
  }
  if (!vocab.is_object()) {
    throw TokenizerError("vocab file '" + path + "' holds " + type_name(vocab) +
                         ", expected one JSON object {\"token\": id, ...} as in GPT-2's vocab.json");
  }
  if (!duplicate_key.empty()) {
    throw TokenizerError("vocab file '" + path + "': entry " + shown_quoted(duplicate_key) +
                         " appears twice; each token may appear once, remove one of them");
  }
  return vocab;
}

void read_vocab_checked(const std::string& path, const std::string& text, const ByteUnicodeTable& table,
                        BpeModel& model) {
  const nlohmann::json vocab = parse_vocab_json(path, text);
  const auto count = static_cast<int64_t>(vocab.size());
  if (count == 0) {
    throw TokenizerError("vocab file '" + path + "' is an empty object; expected GPT-2's vocab.json");
  }
  model.reserve_tokens(count);
  std::vector<const std::string*> key_of_id(count, nullptr);
  for (const auto& [key, value] : vocab.items()) {
    if (!value.is_number_integer()) {
      throw TokenizerError("vocab file '" + path + "': entry " + shown_quoted(key) + " has " + type_name(value) + " " +
                           shown_quoted(value.dump()) + " as its id; ids must be integers 0.." + std::to_string(count - 1));
    }
    // nlohmann reads a non-negative integer as unsigned: a huge one must not wrap to a negative id.
    if (!value.is_number_unsigned() || value.get<uint64_t>() >= static_cast<uint64_t>(count)) {
      throw TokenizerError("vocab file '" + path + "': entry " + shown_quoted(key) + " has id " + value.dump() +
                           ", outside 0.." + std::to_string(count - 1) + " (the file has " + std::to_string(count) +
                           " entries and ids must number them without gaps); fix the id");
    }
    const auto id = static_cast<int64_t>(value.get<uint64_t>());
    if (key_of_id[id]) {
      throw TokenizerError("vocab file '" + path + "': entries " + shown_quoted(*key_of_id[id]) + " and " + shown_quoted(key) +
                           " both have id " + std::to_string(id) + "; each id must name one token, fix one of them");
    }
    if (key.empty()) {
      throw TokenizerError("vocab file '" + path + "': an entry has the empty string as its token (id " +
                           std::to_string(id) + "); every token is at least one byte, remove it");
    }
    char32_t bad = 0;
    std::optional<std::string> bytes = table.to_bytes(key, &bad);
    if (!bytes) {
      throw TokenizerError("vocab file '" + path + "': entry " + shown_quoted(key) + " contains " + code_point_name(bad) +
                           ", which is not one of GPT-2's 256 byte symbols (a space is written \"Ġ\"); " +
                           "this is not a byte-level BPE vocab like GPT-2's vocab.json");
    }
    key_of_id[id] = &key;
    model.add_token(static_cast<int32_t>(id), std::move(*bytes));  // keys differ, so their bytes do
  }
}

// The 256 single-byte tokens every byte-level BPE vocab has, or an error naming the first missing.
void find_byte_ids(const std::string& path, const ByteUnicodeTable& table, BpeModel& model) {
  for (int b = 0; b < 256; ++b) {
    const char byte = static_cast<char>(b);
    const int32_t id = model.id_of(std::string_view(&byte, 1));
    if (id < 0) {
      std::string symbol;
      append_utf8(symbol, table.code_point(static_cast<uint8_t>(b)));
      char hex[8];
      std::snprintf(hex, sizeof(hex), "0x%02X", b);
      throw TokenizerError("vocab file '" + path + "' has no token for the byte " + hex + " (written " +
                           shown_quoted(symbol) + "); a byte-level BPE vocab needs all 256 single-byte tokens");
    }
    model.byte_ids[b] = id;
  }
}

// `symbols` stays empty when the checked reader had to read the file.
void read_vocab(const std::string& path, const ByteUnicodeTable& table, BpeModel& model, VocabSymbols& symbols) {
  const std::string text = read_whole_file(path, "vocab file");
  if (!read_vocab_fast(text, table, model, symbols)) {
    model = BpeModel();
    symbols = VocabSymbols();
    read_vocab_checked(path, text, table, model);
  }
  find_byte_ids(path, table, model);
}

// One side of a merge line, as bytes, or an error naming the line.
std::string merge_side(const std::string& path, size_t line_number, std::string_view line, std::string_view side,
                       const ByteUnicodeTable& table) {
  char32_t bad = 0;
  std::optional<std::string> bytes = table.to_bytes(side, &bad);
  if (!bytes) {
    std::string hint = bad == U'\r' ? " (Windows line endings? convert the file to \\n)" : "";
    throw TokenizerError("merges file '" + path + "': line " + std::to_string(line_number) + " " + shown_quoted(line) +
                         " contains " + code_point_name(bad) + ", which is not one of GPT-2's 256 byte symbols" + hint +
                         "; each line is two tokens of the vocab, e.g. \"Ġ t\"");
  }
  return *bytes;
}

void read_merges_checked(const std::string& path, const std::string& text, const std::string& vocab_path,
                         const ByteUnicodeTable& table, BpeModel& model) {
  model.merges.clear();
  model.merges.reserve(static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  std::string merged;  // left + right, reused: one allocation per load, not per line
  size_t line_number = 0;
  size_t pos = 0;
  int32_t rank = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (line_number == 1) {
      if (line.substr(0, kMergesHeader.size()) != kMergesHeader) {
        throw TokenizerError("merges file '" + path + "': line 1 is " + shown_quoted(line) +
                             ", expected the header \"#version: 0.2\"; GPT-2's loaders skip line 1 unconditionally, "
                             "so without it the first merge would be lost elsewhere; add the header line");
      }
      continue;
    }
    const auto sides = merge_line_sides(line);
    if (!sides) {
      throw TokenizerError("merges file '" + path + "': line " + std::to_string(line_number) + " " + shown_quoted(line) +
                           " is not two tokens separated by one space; each line is \"<left> <right>\", "
                           "e.g. \"Ġ t\"");
    }
    const std::string left = merge_side(path, line_number, line, sides->first, table);
    const std::string right = merge_side(path, line_number, line, sides->second, table);
    const auto find_token = [&](const std::string& bytes, std::string_view role) {
      const int32_t id = model.id_of(bytes);
      if (id < 0) {
        throw TokenizerError("merges file '" + path + "': line " + std::to_string(line_number) + " " + shown_quoted(line) +
                             ": " + std::string(role) + " " + shown_quoted(table.to_symbols(bytes)) +
                             " is not a token of '" + vocab_path + "'; the merges must come with their own vocab");
      }
      return id;
    };
    const int32_t left_id = find_token(left, "its left side");
    const int32_t right_id = find_token(right, "its right side");
    merged.assign(left).append(right);
    const int32_t merged_id = find_token(merged, "the merged token");
    const auto [held, inserted] = model.merges.emplace(BpeModel::pair_key(left_id, right_id), BpeMerge{rank, merged_id});
    if (!inserted) {
      // Every line after the header is a merge, so rank r was read from line r + 2.
      throw TokenizerError("merges file '" + path + "': line " + std::to_string(line_number) + " " + shown_quoted(line) +
                           " repeats the merge of line " + std::to_string(held->rank + 2) +
                           "; each pair is merged once, remove one of them");
    }
    ++rank;
  }
  if (line_number == 0) {
    throw TokenizerError("merges file '" + path + "' is empty; expected \"#version: 0.2\" and GPT-2's merges");
  }
}

void read_merges(const std::string& path, const std::string& vocab_path, const ByteUnicodeTable& table,
                 const VocabSymbols& symbols, BpeModel& model) {
  const std::string text = read_whole_file(path, "merges file");
  if (!read_merges_fast(text, symbols, model)) read_merges_checked(path, text, vocab_path, table, model);
}

}  // namespace

TokenizerFiles locate_tokenizer_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw TokenizerError("tokenizer directory '" + dir + "' " + (fs::exists(dir, ec) ? "is not a directory" : "does not exist") +
                         "; pass --model DIR, a directory with GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  }
  const auto find = [&](const char* const (&names)[2], const char* what) {
    for (const char* name : names) {
      const fs::path p = fs::path(dir) / name;
      if (fs::exists(p, ec)) return p.string();
    }
    throw TokenizerError("tokenizer directory '" + dir + "' has no " + names[0] + " or " + names[1] + " (the " + what +
                         "); it needs GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  };
  TokenizerFiles files;
  files.vocab = find(kVocabNames, "vocabulary");
  files.merges = find(kMergesNames, "merges");
  return files;
}

BpeModel load_bpe_model(const TokenizerFiles& files, const ByteUnicodeTable& table) {
  BpeModel model;
  VocabSymbols symbols;
  read_vocab(files.vocab, table, model, symbols);
  read_merges(files.merges, files.vocab, table, symbols, model);
  return model;
}

}  // namespace genrepro
