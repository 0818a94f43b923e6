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

// Reads a whole regular file of at most max_bytes; returns false and fills `problem` ("no such
// file", "cannot open: Permission denied", "file holds more than the N bytes allowed; ...") when
// it cannot. The bound holds while reading, whatever size the file system reports (a file that
// grows, a device, /proc): no more than max_bytes + 1 bytes are ever read.
bool read_text_file(const std::string& path, std::string& content, std::string& problem,
                    uint64_t max_bytes);

// "line L, column C" of a byte offset (1-based; columns count bytes).
std::string line_column(std::string_view text, size_t offset);

}  // namespace genrepro
