#pragma once
// The report's view of evidence.json (docs/evidence-format.md): the runs as the shared records
// (records.hpp) plus the document's own blocks (environment, model, experiments) kept as JSON,
// because the report shows them as they were written. Reading checks every field the report
// uses and names the first bad one; blocks it only displays are optional.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/records.hpp"

namespace genrepro {

// The evidence schema this reader understands.
inline constexpr const char* kReportEvidenceSchema = "genrepro.evidence/1";

struct ReportRun {
  std::string id;
  std::string experiment;
  int64_t index = 0;
  int64_t prompt_index = 0;
  std::string prompt;
  RunParams params;
  GenerationResult result;  // prompt_ids, output_ids, steps, stop_reason, stop_step
  std::string text;         // decode(prompt_ids + output_ids), special tokens kept
  std::string continuation;
};

struct ReportDocument {
  std::string name;         // the file's name as the report shows it (no directory: the same
                            // evidence gives the same report wherever it lies)
  nlohmann::json evidence;  // the whole document; the report shows its environment and model
  std::vector<ReportRun> runs;
};

// Reads and checks one evidence file. Throws EvidenceError naming the file and the first bad
// field (missing file, not JSON, wrong schema, a field of the wrong type).
ReportDocument read_report_evidence(const std::string& path);

// The same for an already parsed document; `name` is used in messages and in the report.
ReportDocument parse_report_evidence(const nlohmann::json& evidence, const std::string& name);

}  // namespace genrepro
