#pragma once
// Parsing JSON that a user (or another machine) wrote, without trusting it. nlohmann's parser
// recurses once per nesting level, so a file of a million '[' would overflow the stack: the text
// is pre-scanned for nesting depth and for valid UTF-8 first, and every problem is reported with
// a line and column. Duplicate object keys, which nlohmann silently resolves to the last one,
// are refused: in an experiment file they are always a mistake.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace genrepro {

// Deep enough for any experiment or evidence file (evidence nests about 6 levels).
constexpr int kMaxJsonDepth = 64;

struct JsonParseOutcome {
  nlohmann::json value;
  std::string problem;  // empty when the text parsed; else one line: "line 3, column 7: ..."
  bool ok() const { return problem.empty(); }
};

// Never throws on bad input; callers prefix `problem` with the file name and throw their own
// typed error (SpecError for experiments, EvidenceError for evidence).
JsonParseOutcome parse_json_text(std::string_view text, int max_depth = kMaxJsonDepth);

// Reads a whole file; returns false and fills `problem` ("cannot read: No such file or
// directory") when it cannot. Refuses files larger than max_bytes without reading them.
bool read_text_file(const std::string& path, std::string& content, std::string& problem,
                    uint64_t max_bytes);

// "line L, column C" of a byte offset (1-based; columns count bytes).
std::string line_column(std::string_view text, size_t offset);

}  // namespace genrepro
