#pragma once
// Parsing JSON that a user (or another machine) wrote, without trusting it. nlohmann's parser
// recurses once per nesting level, so a file of a million '[' would overflow the stack: the text
// is pre-scanned for nesting depth and for valid UTF-8 first, and every problem is reported with
// a line and column. Duplicate object keys, which nlohmann silently resolves to the last one,
// are refused: in an experiment file they are always a mistake.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace genrepro {

// JSON that keeps its keys in insertion order: every document genrepro writes (evidence,
// goldens, the diff and replay reports) and evidence as read, so a file reads back as written.
using OrderedJson = nlohmann::ordered_json;

// Deep enough for any experiment or evidence file (evidence nests about 6 levels).
constexpr int kMaxJsonDepth = 64;

template <class Json>
struct ParsedJson {
  Json value;
  std::string problem;  // empty when the text parsed; else one line: "line 3, column 7: ..."
  bool ok() const { return problem.empty(); }
};
using JsonParseOutcome = ParsedJson<nlohmann::json>;

// Never throws on bad input; callers prefix `problem` with the file name and throw their own
// typed error (SpecError for experiments, EvidenceError for evidence).
JsonParseOutcome parse_json_text(std::string_view text, int max_depth = kMaxJsonDepth);
// The same checks, keeping the keys in the file's order.
ParsedJson<OrderedJson> parse_ordered_json_text(std::string_view text, int max_depth = kMaxJsonDepth);

// The one way genrepro writes a JSON document (evidence, goldens, the diff, plan and article-check
// reports): `indent` spaces, invalid UTF-8 replaced, and never a non-number. nlohmann would write
// NaN and infinity as null, silently; here they are refused: JsonWriteError names the JSON path
// ("runs[0].steps[2].prob: NaN"). Writers that mean to keep such a value convert it first (the
// evidence writes the strings "NaN", "Infinity", "-Infinity"; evidence.hpp real_to_json).
std::string json_document_text(const OrderedJson& j, int indent = 2);
std::string json_document_text(const nlohmann::json& j, int indent = 2);

// A number written non-zero that a double reads as 0: `temperature: 1e-400` would silently mean
// greedy. (A subnormal such as 1e-310 keeps its value and is left to the field's own range check;
// evidence round-trips every double, subnormals included.) Every JSON parse
// above refuses such a number, and so does every real-valued flag (cli/flag_kinds.hpp). Returns
// the problem naming `token` as written, or empty when it is fine (or not a number at all).
std::string underflow_problem(std::string_view token);

// "line L, column C" of a byte offset (1-based; columns count bytes).
std::string line_column(std::string_view text, size_t offset);

}  // namespace genrepro
