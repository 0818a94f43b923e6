#pragma once
// Blessing: the only way a golden changes. Evidence is split into one golden file per
// experiment (DIR/<experiment>.json), each compared with what DIR holds now, and written
// atomically (temp file in DIR, fsync, rename) without its volatile fields. The asking (y/N on a
// terminal, --yes otherwise) is the CLI's; everything else is here. No libtorch.
#include <cstddef>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "evidence/evidence_diff.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// One golden file a bless would write.
struct GoldenFilePlan {
  std::string experiment;
  std::string path;       // DIR/<golden_file_name(experiment)>
  OrderedJson doc;        // the evidence restricted to this experiment, volatile fields stripped
  std::size_t runs = 0;
  bool exists = false;    // DIR already holds a golden file of this name
  bool changes = true;    // new, or its runs do not agree with the file in DIR
  std::string preview;    // what changes: the diff against the file in DIR, or "new file"
};

// "<experiment>.json"; characters outside [A-Za-z0-9._-] become '_' so a name never leaves DIR.
std::string golden_file_name(const std::string& experiment);

// Splits `evidence` by runs[].experiment (experiments[] is filtered to match) and diffs each
// part against DIR/<name>.json when it exists. Throws EvidenceError for a run whose experiment
// is empty, or for an existing golden file that is not readable evidence.
std::vector<GoldenFilePlan> plan_bless(const EvidenceFile& evidence, const std::string& into_dir,
                                       const EvidenceDiffOptions& options = {});

// The preview text for all plans, ending with one line per file ("bless: DIR/x.json: new, 4 runs").
std::string format_bless_preview(const std::vector<GoldenFilePlan>& plans);

// Writes `doc` (2-space indented, trailing newline) to `path` with write_file_atomically
// (harness/util/atomic_file.hpp: temp file in the same directory, fsync, rename), so a reader sees the
// old golden or the new one, never a torn one. Throws EvidenceError naming the path.
void write_json_atomically(const std::string& path, const OrderedJson& doc);

// Writes every plan that changes; returns how many files were written.
std::size_t write_golden(const std::vector<GoldenFilePlan>& plans);

}  // namespace genrepro
