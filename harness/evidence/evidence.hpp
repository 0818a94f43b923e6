#pragma once
// evidence.json in memory and on disk (docs/evidence-format.md, docs/schema/evidence.schema.json):
// what `genrepro run` writes and merge, diff, replay, bless, report and check-article read.
//
// Writing (evidence.cpp) keeps every double bit-exact: nlohmann writes the shortest text that
// reads back to the same double, and the non-finite values JSON cannot hold are written as the
// strings "NaN", "Infinity", "-Infinity" (real_to_json; real_from_json reads them back).
//
// Reading is one function for every verb, read_evidence, in three stages, one file each:
//   evidence_read.cpp       the file: bounded read, UTF-8, nesting depth, JSON syntax
//   evidence_from_json.cpp  the structure: schema version, every field's presence and type,
//                           each problem named by file and JSON path (EvidenceError)
//   evidence_checks.cpp     the meaning, on typed values: what holds between fields (run ids
//                           unique, steps numbered in order and equal to output_ids, ...)
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evidence/environment.hpp"
#include "evidence/numerics_record.hpp"
#include "evidence/resume_record.hpp"
#include "evidence/run_record.hpp"
#include "params/run_params.hpp"
#include "util/json_text.hpp"

namespace genrepro {

constexpr const char* kEvidenceSchema = "genrepro.evidence/1";

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

// Runs that ran in another environment than the evidence's own: shards merged from different
// machines (genrepro merge). `runs` are run indices (RunRecord::index), sorted.
struct RunEnvironment {
  Environment environment;
  std::vector<int64_t> runs;
};

// What decided the bits of the runs llama.cpp's engine computed (docs/engines.md): the library
// and release, the CPU backend variant ggml loaded, the settings it ran with, and the GGUF.
struct LlamaCppRecord {
  std::string library;         // the libllama opened
  std::string library_sha256;
  std::string ggml_version;
  std::string ggml_commit;
  std::string cpu_backend;     // "libggml-cpu-haswell.so", or "built in"
  std::string system_info;     // llama_print_system_info()
  std::string kv_type;         // "f16" | "f32"
  std::string flash_attn;      // "auto" | "on" | "off"
  int64_t threads = 1;
  int64_t n_ubatch = 0;        // the physical batch a prompt is split into
  std::string gguf_sha256;     // the GGUF genrepro export wrote from the model's files
  int64_t gguf_export_revision = 0;
};

struct Evidence {
  std::string schema = kEvidenceSchema;
  ToolInfo genrepro;
  // Volatile; "YYYY-MM-DDTHH:MM:SSZ" in evidence, absent in a golden (and then not written).
  std::optional<std::string> created_utc;
  Environment environment;
  // Absent in evidence written before the numerics modes: that evidence is reference.
  std::optional<NumericsRecord> numerics;
  ModelInfo model;
  std::vector<ExperimentRecord> experiments;
  std::vector<RunRecord> runs;
  // Empty unless merged from shards whose environments differ: every run not listed here ran in
  // `environment`. Evidence written before merge kept environments has none.
  std::vector<RunEnvironment> run_environments;
  // Volatile; present when `run --resume` kept runs from a checkpoint (resume_record.hpp).
  std::optional<ResumeRecord> resumed;
  // Present when some runs used the llama.cpp engine.
  std::optional<LlamaCppRecord> llama_cpp;
};

// The environment run `index` ran in: the one of run_environments that lists it, else e.environment.
const Environment& environment_of_run(const Evidence& e, int64_t index);

// One evidence file as read: where it came from (for messages) and what it holds.
struct EvidenceFile {
  std::string path;
  Evidence evidence;
};

// ---- writing ----

// JSON with keys in the documented order. Volatile fields that are absent (a golden's) are left out.
OrderedJson evidence_to_json(const Evidence& e);
OrderedJson environment_to_json(const Environment& env);
OrderedJson model_to_json(const ModelInfo& m);
OrderedJson llama_cpp_to_json(const LlamaCppRecord& l);
OrderedJson run_to_json(const RunRecord& r);

// JSON has no NaN or infinity: evidence writes them as "NaN", "Infinity", "-Infinity".
OrderedJson real_to_json(double v);
// The inverse: a JSON number, or one of those three strings; empty for anything else.
std::optional<double> real_from_json(const OrderedJson& v);

// The file's text: two-space indented JSON and a final newline.
std::string evidence_text(const Evidence& e);
// Atomically replaces `path` (harness/util/atomic_file.hpp).
void write_evidence(const std::string& path, const Evidence& e);

// ---- reading ----

// The fix every reading message ends with: for a file that is not evidence, and for evidence
// with a bad field.
inline constexpr const char* kGiveEvidenceHint = "give an evidence file written by 'genrepro run'";
inline constexpr const char* kRegenerateEvidenceHint = "regenerate it with 'genrepro run' (format: docs/evidence-format.md)";

// Reads ("-": standard input; pipes and FIFOs alike, at most kMaxEvidenceBytes through
// util/bounded_read.hpp), checks (size, UTF-8, depth, JSON syntax, schema string, structure, meaning) and
// converts. Throws EvidenceError naming the file, the JSON path, the value found and what is
// allowed: "new.json: runs[0].steps[1].prob: expected a number (or ...), found string \"0.5\"; ...".
Evidence read_evidence(const std::string& path);
EvidenceFile read_evidence_file(const std::string& path);
// GOLDEN as diff and replay take it: one evidence file, or a directory whose *.json files (not
// recursive, sorted by name, hidden files skipped) are pooled. Throws EvidenceError for an empty
// directory and for a run id that appears in two golden files.
std::vector<EvidenceFile> read_golden(const std::string& file_or_dir);

// The conversion and the checks read_evidence applies after parsing; `file` names the source
// in messages ("<file>: runs[3].steps[0].prob: ...").
Evidence evidence_from_json(const OrderedJson& j, const std::string& file);
// What must hold between the fields of evidence (evidence_checks.cpp lists it); throws
// EvidenceError naming the file and the JSON path of the first thing that does not.
void check_evidence(const Evidence& e, const std::string& file);

// ---- volatile fields ----

// A copy without the fields that legitimately differ between identical runs: created_utc,
// runs[*].timing, environment.threads.runs_concurrently, numerics.execution (how the runs
// were scheduled: batch, workers, threads, the probe's timing) and resumed (which runs a
// checkpoint supplied). Compare these to compare evidence;
// bless writes goldens without them. For nlohmann::json and OrderedJson alike, so a golden
// keeps the evidence's key order.
template <class Json>
Json strip_volatile(Json evidence) {
  if (!evidence.is_object()) return evidence;
  evidence.erase("created_utc");
  if (evidence.contains("environment") && evidence["environment"].is_object() &&
      evidence["environment"].contains("threads") && evidence["environment"]["threads"].is_object())
    evidence["environment"]["threads"].erase("runs_concurrently");
  if (evidence.contains("numerics") && evidence["numerics"].is_object()) evidence["numerics"].erase("execution");
  if (evidence.contains("run_environments") && evidence["run_environments"].is_array())
    for (auto& re : evidence["run_environments"])
      if (re.is_object() && re.contains("environment") && re["environment"].is_object() &&
          re["environment"].contains("threads") && re["environment"]["threads"].is_object())
        re["environment"]["threads"].erase("runs_concurrently");
  evidence.erase("resumed");
  if (evidence.contains("runs") && evidence["runs"].is_array())
    for (auto& run : evidence["runs"])
      if (run.is_object()) run.erase("timing");
  return evidence;
}

// "2026-11-30T12:00:00Z" for now.
std::string utc_timestamp_now();

}  // namespace genrepro
