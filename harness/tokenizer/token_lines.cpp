#include "tokenizer/token_lines.hpp"

#include <cstdint>

#include "util/json_text.hpp"

#include <istream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "util/errors.hpp"
#include "util/text_excerpt.hpp"
#include "util/utf8.hpp"

namespace genrepro {

namespace {

// How much of a bad input line an error message quotes.
constexpr size_t kMaxQuotedLineChars = 60;

std::string excerpt(std::string_view text) { return quoted_excerpt(text, kMaxQuotedLineChars); }

std::string where_line(const std::string& name, size_t line) {
  return "--input '" + name + "' line " + std::to_string(line);
}

// Calls on_line(text, line_number) for every line of `in`; a blank line is an error, since each
// line of output answers one line of input.
template <class F>
void for_each_line(std::istream& in, const std::string& name, const char* expected, F&& on_line) {
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      throw UsageError(where_line(name, number) + " is empty; each line must be " + expected);
    }
    on_line(line, number);
  }
  if (in.bad()) throw UsageError("--input '" + name + "' could not be read after line " + std::to_string(number));
}

}  // namespace

std::vector<int64_t> parse_id_array(std::string_view json, const std::string& where) {
  const auto fail = [&](const std::string& what) {
    return UsageError(where + ": " + excerpt(json) + " " + what + "; expected a JSON array of token ids like [1169, 7850]");
  };
  const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) throw fail("is not valid JSON");
  if (!parsed.is_array()) throw fail("is not an array");
  std::vector<int64_t> ids;
  ids.reserve(parsed.size());
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (!parsed[i].is_number_integer()) throw fail("has " + parsed[i].dump() + " at index " + std::to_string(i) + ", not an integer");
    // get<int64_t> would wrap 18446744073709551615 to -1 and name an id nobody wrote.
    if (parsed[i].is_number_unsigned() && parsed[i].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw fail("has " + parsed[i].dump() + " at index " + std::to_string(i) + ", larger than any token id");
    ids.push_back(parsed[i].get<int64_t>());
  }
  return ids;
}

std::string ids_to_json(const std::vector<int64_t>& ids) { return nlohmann::json(ids).dump(); }

void encode_json_lines(const Gpt2Tokenizer& tokenizer, std::istream& in, const std::string& name, std::ostream& out) {
  constexpr const char* kExpected = "a JSON object {\"text\": \"...\"}";
  for_each_line(in, name, kExpected, [&](const std::string& line, size_t number) {
    const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const auto fail = [&](const std::string& what) {
      return UsageError(where_line(name, number) + ": " + excerpt(line) + " " + what + "; each line must be " + kExpected);
    };
    if (parsed.is_discarded()) throw fail("is not valid JSON");
    if (!parsed.is_object()) throw fail("is not a JSON object");
    // nlohmann keeps the last of two equal keys; which "text" was meant is unknowable.
    const JsonParseOutcome checked = parse_json_text(line);
    if (!checked.ok()) throw fail("is refused: " + checked.problem);
    const auto text = parsed.find("text");
    if (text == parsed.end()) throw fail("has no \"text\"");
    if (!text->is_string()) throw fail("has a \"text\" that is not a string");
    try {
      out << ids_to_json(tokenizer.encode(text->get_ref<const std::string&>())) << '\n';
    } catch (const TokenizerError& e) {
      throw TokenizerError(where_line(name, number) + ": " + e.what());
    }
  });
}

void decode_json_lines(const Gpt2Tokenizer& tokenizer, std::istream& in, const std::string& name, std::ostream& out) {
  for_each_line(in, name, "a JSON array of token ids like [1169, 7850]", [&](const std::string& line, size_t number) {
    const std::vector<int64_t> ids = parse_id_array(line, where_line(name, number));
    std::string text;
    try {
      text = tokenizer.decode_for_display(ids);
    } catch (const TokenizerError& e) {
      throw TokenizerError(where_line(name, number) + ": " + e.what());
    }
    out << nlohmann::json{{"text", text}}.dump() << '\n';
  });
}

}  // namespace genrepro
