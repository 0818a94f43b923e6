#pragma once
// evidence.json in memory and on disk (docs/evidence-format.md, docs/schema/evidence.schema.json):
// what `genrepro run` writes and merge, diff, replay, bless and report read. Conversions keep
// every double bit-exact (nlohmann writes the shortest text that reads back to the same double;
// non-finite values, which JSON cannot hold, are written as the strings "NaN", "Infinity",
// "-Infinity"). Reading names the file and the JSON path of any problem (EvidenceError).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/environment.hpp"
#include "evidence/run_record.hpp"
#include "spec/run_params.hpp"

namespace genrepro {

constexpr const char* kEvidenceSchema = "genrepro.evidence/1";
// Evidence of a large grid can be big, but not this big; bigger files are refused unread.
constexpr uint64_t kMaxEvidenceFileBytes = uint64_t(2) << 30;

struct ToolInfo {
  std::string version;     // GENREPRO_VERSION
  std::string git_commit;  // GENREPRO_GIT_COMMIT ("<sha>[-dirty]")
};

struct FileRecord {
  std::string sha256;
  uint64_t bytes = 0;
};

struct ModelInfo {
  std::string source;               // "fixture" | "hf-dir" | "hf-cache" | "env" (model_files.hpp to_string)
  std::string path;                 // absolute model directory
  nlohmann::json config;            // config.json as read
  int64_t eos_token_id = 0;
  int64_t n_positions = 0;
  std::map<std::string, FileRecord> files;  // by file name: model.safetensors, config.json, vocab.json, merges.txt
};

struct ExperimentRecord {
  std::string name;
  std::string path;    // as given on the command line
  std::string sha256;  // of the file's bytes
  nlohmann::json spec; // the file as parsed
};

struct RunRecord {
  std::string id;
  std::string experiment;
  int64_t index = 0;         // position in the unsharded expansion of all experiments
  int64_t prompt_index = 0;
  std::string prompt;
  RunParams params;
  GenerationResult result;   // prompt_ids, output_ids, steps, stop, seconds
  std::string text;          // decode(prompt_ids + output_ids), special tokens kept
  std::string continuation;  // decode(output_ids)
};

struct Evidence {
  std::string schema = kEvidenceSchema;
  ToolInfo genrepro;
  std::string created_utc;  // "YYYY-MM-DDTHH:MM:SSZ"
  Environment environment;
  ModelInfo model;
  std::vector<ExperimentRecord> experiments;
  std::vector<RunRecord> runs;
};

// JSON with keys in the documented order.
nlohmann::ordered_json evidence_to_json(const Evidence& e);
nlohmann::ordered_json environment_to_json(const Environment& env);
nlohmann::ordered_json model_to_json(const ModelInfo& m);
nlohmann::ordered_json run_to_json(const RunRecord& r);

// `file` names the source in messages: "<file>: runs[3].steps[0].prob: ...".
Evidence evidence_from_json(const nlohmann::json& j, const std::string& file);
Environment environment_from_json(const nlohmann::json& j, const std::string& file, const std::string& where);
// One element of runs[] (also of a blessed golden, which has no volatile fields); `where` is its
// JSON path ("runs[3]") for messages.
RunRecord run_from_json(const nlohmann::json& j, const std::string& file, const std::string& where);

// The file's text: two-space indented JSON and a final newline.
std::string evidence_text(const Evidence& e);
// Atomically replaces `path` (harness/util/atomic_file.hpp).
void write_evidence(const std::string& path, const Evidence& e);
// Reads, checks (size, UTF-8, depth, JSON syntax, schema string, structure) and converts.
Evidence read_evidence(const std::string& path);

// A copy without the fields that legitimately differ between identical runs: created_utc,
// runs[*].timing and environment.threads.runs_concurrently. Compare these to compare evidence;
// bless writes goldens without them. For nlohmann::json and ordered_json alike, so a golden
// keeps the evidence's key order.
template <class Json>
Json strip_volatile(Json evidence) {
  if (!evidence.is_object()) return evidence;
  evidence.erase("created_utc");
  if (evidence.contains("environment") && evidence["environment"].is_object() &&
      evidence["environment"].contains("threads") && evidence["environment"]["threads"].is_object())
    evidence["environment"]["threads"].erase("runs_concurrently");
  if (evidence.contains("runs") && evidence["runs"].is_array())
    for (auto& run : evidence["runs"])
      if (run.is_object()) run.erase("timing");
  return evidence;
}

// "2026-11-30T12:00:00Z" for now.
std::string utc_timestamp_now();

}  // namespace genrepro
