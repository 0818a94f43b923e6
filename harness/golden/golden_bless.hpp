#pragma once
// Blessing: the only way a golden changes. Evidence is split into one golden file per
// experiment (DIR/<experiment>.json) and compared with what DIR holds now, run by run. Each run
// is new, changed (with diff's verdict and first divergence), unchanged, or missing from the
// evidence. A person (or --yes / --run) decides per run; compose_golden then builds each file
// from the decisions: accepted runs from the evidence, every other run as the golden has it. A
// golden run missing from the evidence is kept unless pruning was asked for, so no run is ever
// lost silently. Files are written atomically (temp file in DIR, fsync, rename) without their
// volatile fields, and DIR/blessed.tsv records the commit each file was blessed from.
// The asking is the CLI's (harness/cli/bless.cpp); everything else is here. No libtorch.
//
// Where bless writes: only DIR/<name>.json for experiment names that experiment files
// allow (1 to 64 of [A-Za-z0-9._-], starting with a letter or digit: no '/', "..", NUL or control
// characters), and DIR/blessed.tsv. A golden file or record that is a symlink is refused, never
// followed or replaced (docs/bless.md, "Where bless writes").
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "compare/evidence_diff.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// The longest experiment name bless files (the experiment files' own limit).
inline constexpr std::size_t kMaxGoldenNameLength = 64;
// The record of what each golden file was blessed from, beside the golden files (not *.json, so
// readers of DIR never take it for evidence).
inline constexpr const char* kBlessRecordName = "blessed.tsv";

enum class RunChange {
  added,      // in the evidence, not in the golden file
  changed,    // in both, and diff says they differ
  unchanged,  // in both, and diff says they agree
  missing,    // in the golden file, not in the evidence
};
const char* to_string(RunChange c);  // "new", "changed", "unchanged", "missing"

// One run as a review shows it.
struct RunReview {
  std::string id;
  RunChange change = RunChange::unchanged;
  std::optional<RunDiff> diff;            // changed: the verdict and where the runs part
  std::optional<std::size_t> golden;      // index into GoldenFilePlan::golden->runs (changed, unchanged, missing)
  std::optional<std::size_t> current;     // index into GoldenFilePlan::incoming.runs (added, changed, unchanged)
  // added or missing: the run on the other side that ran the same experiment cell under another id
  // (compare/run_pairing.hpp, kDefaultPairBy), and every parameter that changed between them,
  // framework keys included ("framework article → llama.cpp, min_p 0 → 0.05"); empty: no partner.
  std::optional<std::string> paired_with;
  std::string paired_change;
  // unchanged: what the two records differ in although diff says they agree (logits digests,
  // probabilities within the tolerance, the numerics that computed them): bit-only drift, which
  // only --refresh-bits writes. Empty when the evidence records the run exactly as the golden does.
  std::string drift;
  bool is_regression() const { return diff && diff->verdict == Verdict::regression; }
  bool needs_decision() const { return change == RunChange::added || change == RunChange::changed; }
};

// One golden file a bless may write.
struct GoldenFilePlan {
  std::string experiment;
  std::string path;               // DIR/<experiment>.json
  std::optional<Evidence> golden; // what DIR holds now (empty: a new file)
  Evidence incoming;              // the evidence restricted to this experiment
  std::vector<RunReview> runs;    // the evidence's runs in its order, then missing ones in the golden's order
  std::vector<ValueDifference> environment;  // against the golden file (likely causes, never failures)
  std::vector<ValueDifference> provenance;
  // "numerics reference → strict" when the golden file's runs were computed in other numerics than
  // the evidence's (mode, tile, kernel revision, CPU kernels); empty when the same. A file holds one
  // numerics record, so when it is written its drifted runs all come from the evidence.
  std::string numerics_change;
  bool exists() const { return golden.has_value(); }
  std::size_t count(RunChange c) const;
  const RunRecord* golden_run(const RunReview& r) const { return r.golden ? &golden->runs[*r.golden] : nullptr; }
  const RunRecord* current_run(const RunReview& r) const { return r.current ? &incoming.runs[*r.current] : nullptr; }
};

struct BlessPlan {
  std::vector<GoldenFilePlan> files;
  std::size_t count(RunChange c) const;
  const RunReview* find(const std::string& id) const;
};

enum class Decision { accept, reject, skip };

struct BlessDecisions {
  std::map<std::string, Decision> runs;  // by run id; a run not listed is skipped
  bool prune = false;                    // remove golden runs missing from the evidence
  std::set<std::string> prune_only;      // when not empty, prune only these missing runs (--run)
  // unchanged runs with bit-only drift whose evidence record replaces the golden's (--refresh-bits);
  // a run whose tokens or verdict changed is never here: it is reviewed as changed
  std::set<std::string> refresh;
};

// Throws EvidenceError unless `name` is a name experiment files allow; `where` names the file
// and field ("e.json: runs[3].experiment").
void check_golden_name(const std::string& name, const std::string& where);
// "<experiment>.json" for a name check_golden_name accepts.
std::string golden_file_name(const std::string& experiment);

// Splits `evidence` by runs[].experiment (experiments[] filtered to match) and compares each part
// with DIR/<name>.json, run by run. Throws EvidenceError for a name bless refuses, for a golden
// path that is a symlink or not a regular file, and for an existing golden file that is not
// readable evidence.
BlessPlan plan_bless(const EvidenceFile& evidence, const std::string& into_dir, const EvidenceDiffOptions& options = {});

// What the golden file should hold after `decisions`: the evidence's runs in its order, each
// accepted one from the evidence and every other one as the golden has it (a new run that was not
// accepted is left out), golden runs missing from the evidence kept where they were unless
// pruned. Empty when the file would not change. The top-level blocks (environment, model,
// genrepro, experiments[]) are the evidence's when any run of the evidence was accepted.
std::optional<OrderedJson> compose_golden(const GoldenFilePlan& plan, const BlessDecisions& decisions);

// Environment and provenance differences of every file, each path once, with the files that show
// it; printed once per bless, not once per file.
std::string format_shared_differences(const BlessPlan& plan);

// One line per run: "greedy.json: changed run greedy/p0/x: regression at new token 3 (steps[2])".
// Missing runs say whether they are kept or pruned; one in `retired` (a missing run an accepted
// new run of its cell replaced, which bless --update removes) says so and names its replacement.
std::string format_run_line(const GoldenFilePlan& file, const RunReview& run, bool prune,
                            const std::set<std::string>& retired = {}, const std::set<std::string>& refresh = {});

// The two continuations from a few tokens before their first difference: the common tokens,
// then each side's own tokens (red for the golden's, green for the new's when `color`). Token
// texts are JSON-escaped, so nothing in the evidence can drive the terminal.
std::string format_token_diff(const GoldenFilePlan& file, const RunReview& run, bool color);

// The whole preview for a non-interactive bless (--yes, --run): the shared differences, each
// file's changed/new/missing runs, and one line per file.
// Unchanged runs with bit-only drift are listed too, as refreshed when in `refresh`.
std::string format_bless_preview(const BlessPlan& plan, bool prune, const std::set<std::string>& retired = {},
                                 const std::set<std::string>& refresh = {});

// The unchanged runs whose records drifted in bits only (RunReview::drift), every file.
std::vector<std::string> drifted_runs(const BlessPlan& plan);
// The drifted runs that `decisions` write from the evidence: the refreshed ones, and every drifted
// run of a file that takes the evidence's numerics record (a file holds one).
std::set<std::string> refreshed_runs(const BlessPlan& plan, const BlessDecisions& decisions);

// Where a bless came from, for DIR/blessed.tsv.
struct BlessSource {
  std::string commit;           // HEAD of the work tree holding DIR, or "none (...)"
  bool dirty = false;           // tracked files outside DIR differ from HEAD
  std::string evidence_path;    // as given
  bool in_git = true;           // false: DIR is in no git work tree (recorded as "not in git", not "clean")
};

// Writes `doc` (2-space indented, trailing newline) to `path` with write_file_atomically
// (harness/util/atomic_file.hpp: temp file in the same directory, fsync, rename), so a reader
// sees the old golden or the new one, never a torn one. Throws EvidenceError naming the path.
void write_json_atomically(const std::string& path, const OrderedJson& doc);

// Writes every file whose composed content changes and DIR/blessed.tsv (its line for each written
// file; other lines kept) as one journaled write (golden/golden_journal.hpp): after a kill, the
// next bless finishes or rolls back all of them. Call with DIR's GoldenDirLock held. Returns the
// paths written (the record not included). `after_rename`: golden_journal's test hook.
std::vector<std::string> write_golden(const BlessPlan& plan, const BlessDecisions& decisions, const BlessSource& source,
                                      const std::string& into_dir,
                                      const std::function<void(std::size_t)>& after_rename = {});

}  // namespace genrepro
