#pragma once
// The checkpoint of an unfinished `genrepro run` (docs/resume.md): every run finished so
// far, kept next to the evidence it will become (`<out>.checkpoint`), so that an interrupted or
// killed grid resumes where it stopped instead of starting over.
//
// JSON Lines. The first line says what the runs belong to; every later line is one finished run,
// exactly as evidence.runs[] holds it, appended with one write(2) and flushed the moment the run
// ends. A kill at any instant therefore leaves every finished run on disk; at worst the last line
// is cut short, and the reader drops that line alone.
//   {"sha256":"<of the body>","line":{"schema": "genrepro.checkpoint/2", "key": {build, environment, model, experiments, shard, numerics}}}
//   {"sha256":"<of the body>","line":{"id": "greedy/p0/greedy-3f1a...", "experiment": ..., "index": 0, ...}}
// Each line carries the sha256 of its body's bytes, so an edited or damaged line is refused; each
// kept run is then read like evidence (structure and consistency, evidence_consistency.hpp).
//
// While a run owns the file it holds an exclusive lock on it (flock), so two processes given the
// same --out refuse each other instead of interleaving.
#include <cstdint>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// /2: every line carries the sha256 of its own bytes (checkpoint.cpp); /1 files are refused.
inline constexpr const char* kCheckpointSchema = "genrepro.checkpoint/2";

// "<out>.checkpoint": beside the evidence, never *.json, so golden directories never read it.
std::string checkpoint_path_for(const std::string& out);

// What a checkpoint's runs depend on, from the header the evidence will carry (its numerics set):
// the build (genrepro version and commit), the environment (volatile fields dropped), the model
// (config and file checksums; not its path), the experiments (name, sha256, spec; not their
// paths), the shard ("I/N") and the numerics (mode, tile, inexact_batch). Two runs with equal keys
// give byte-identical run records.
OrderedJson checkpoint_key(const Evidence& header, const std::string& shard);

// Why `found` (a checkpoint's key) is not `expected`, in one phrase naming the part and the first
// field that differs: "a different model: model.files.model.safetensors.sha256 is \"ab...\" in the
// checkpoint, \"cd...\" now". Empty when they are equal.
std::string checkpoint_key_mismatch(const OrderedJson& found, const OrderedJson& expected);

struct CheckpointContents {
  bool empty = true;                 // nothing written yet (or only a cut-short first line)
  OrderedJson key;                   // the first line's key (when not empty)
  std::vector<OrderedJson> runs;     // one per complete run line, as parsed
  uint64_t complete_bytes = 0;       // where the last complete line ends
  bool dropped_partial_line = false; // the last line was cut short (a kill mid-write) and is ignored
  std::string sha256;                // of the complete lines (the first complete_bytes bytes)
};

// An open, locked checkpoint file. Not copyable; the lock ends when it is destroyed.
class CheckpointFile {
 public:
  // Opens `path` (creating it and missing directories) and takes its lock. Throws Error naming
  // the path when it cannot be created (an unwritable --out is found before the first run) or
  // when another process holds it.
  static CheckpointFile open(const std::string& path);
  CheckpointFile(CheckpointFile&& other) noexcept;
  CheckpointFile& operator=(CheckpointFile&&) = delete;
  CheckpointFile(const CheckpointFile&) = delete;
  // Ends the lock; deletes the file if it is still empty (nothing ran).
  ~CheckpointFile();

  const std::string& path() const { return path_; }
  // Whether the file was there before open() (an empty checkpoint, not a missing one).
  bool existed() const { return existed_; }

  // What the file holds now: bounded (kMaxEvidenceBytes), UTF-8 and depth-checked like every
  // reader; a bad first line or a bad line before the last is an EvidenceError naming the line.
  CheckpointContents read() const;

  // Empties the file; the first line is written with the first run, so a file that holds no run
  // stays empty and is not left behind.
  void start(const OrderedJson& key);
  // Cuts the file back to `bytes` (dropping a cut-short last line) before appending to it.
  void truncate_to(uint64_t bytes);
  // Appends one run as one line and flushes it to disk. On failure (a full disk) the file is cut
  // back to where it was and Error is thrown naming the path and the reason.
  void append(const OrderedJson& run);
  // Deletes the file (after the evidence has been written); the lock ends with the object.
  void remove();

 private:
  CheckpointFile(std::string path, int fd, bool existed) : path_(std::move(path)), fd_(fd), existed_(existed) {}
  void write_line(const std::string& line);
  std::string path_;
  int fd_ = -1;
  bool existed_ = false;
  std::string pending_first_line_;  // set by start(), written by the first append()
};

// Checks the runs of a checkpoint the way every evidence reader checks runs: `header` is the
// evidence the runs will join (the current invocation's), and each run is converted and checked
// as part of it. Messages name the checkpoint and the run's line ("line 5 (runs[3])").
std::vector<RunRecord> checkpoint_runs(const CheckpointContents& contents, const Evidence& header,
                                       const std::string& path);

}  // namespace genrepro
