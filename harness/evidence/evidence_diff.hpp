#pragma once
// Compares GOLDEN evidence against NEW evidence and explains every run that parted: where the
// tokens first diverged, what both runs thought of both tokens there, and why (a float near-tie,
// a changed kept set, a changed sampler or RNG, or a regression of the model itself).
// Works on the evidence JSON (docs/evidence-format.md) directly; docs/diff.md documents the
// tolerance, the classification precedence and the --json shape. No libtorch.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace genrepro {

// Evidence documents keep the writer's key order, so a blessed golden reads like the evidence.
using EvidenceJson = nlohmann::ordered_json;

// Absolute tolerance for every compared probability (and entropy, in nats). docs/diff.md gives
// the reasoning: float32 logits of GPT-2 (|z| ~ 100, ulp ~ 8e-6) reordered by another BLAS or
// vector width move by ~1e-5..1e-4, which moves a probability p by at most ~2·|Δz|·p <= 1e-4 at
// p = 0.5; real regressions (a wrong layer-norm epsilon, a bad cache position, a transposed
// weight) move the leading probabilities by 1e-3 and more.
inline constexpr double kDefaultProbTolerance = 1e-4;

// One evidence file as read from disk: validated to be genrepro evidence of this build's schema
// (kEvidenceSchema; any other version is rejected rather than misread)
// (every run has a string id; duplicate ids are rejected). Fields are checked when compared.
struct EvidenceFile {
  std::string path;
  EvidenceJson doc;
};

// Reads and validates one evidence file. Throws EvidenceError naming the file (missing,
// unreadable, too large, not JSON, not evidence, other schema version, bad runs[] or ids).
EvidenceFile load_evidence_json(const std::string& path);

// GOLDEN as the CLI takes it: one evidence file, or a directory whose *.json files (not
// recursive, sorted by name, hidden files skipped) are pooled. Throws EvidenceError for an empty
// directory and for a run id that appears in two golden files.
std::vector<EvidenceFile> load_golden(const std::string& file_or_dir);

// Why a run differs, in precedence order (the first that applies wins; docs/diff.md says why).
enum class Verdict {
  agree,
  regression,       // the model's distribution, the decoded text or the stop changed: nothing explains it
  kept_set_change,  // top_k / top_p differ, or the nucleus size differs at the first difference
  sampler_change,   // sampler or RNG parameters differ, or the same distribution gave another draw
  params_change,    // only stop/length/listing parameters differ, and they explain the difference
  near_tie,         // the two tokens were within the tolerance of each other in one of the runs
};
const char* to_string(Verdict v);  // "agree", "regression", "kept-set change", ...
const char* json_name(Verdict v);  // "agree", "regression", "kept_set_change", ...

// One value that differs: a JSON path relative to its run ("params.top_p",
// "steps[3].top[0].prob") or to the document ("environment.cpu_capability").
struct ValueDifference {
  std::string path;
  EvidenceJson golden;   // null when absent on that side
  EvidenceJson current;  // the new evidence's value
  std::optional<double> abs_diff;  // for two numbers
};

// One run's token at the divergent step, with its probability in each run's step there (the
// chosen token's own probability, or its entry in the other run's top list; empty when absent).
struct TokenAtStep {
  std::optional<int64_t> id;  // empty: this run has no token at the step (it stopped earlier)
  std::string text;
  std::optional<double> prob_in_golden;
  std::optional<double> prob_in_new;
};

struct Divergence {
  int64_t step = 0;
  TokenAtStep golden;
  TokenAtStep current;
  std::optional<double> golden_margin;  // best minus second-best prob_scaled at the step
  std::optional<double> new_margin;
  std::optional<int64_t> golden_kept;
  std::optional<int64_t> new_kept;
};

struct RunDiff {
  std::string id;
  Verdict verdict = Verdict::agree;
  std::string reason;  // one sentence: what decided the verdict
  // First step with any difference (tokens, kept, probabilities beyond tolerance, token text);
  // empty when the difference is run-level only (text, stop, params).
  std::optional<int64_t> first_difference_step;
  std::optional<Divergence> divergence;  // where the token sequences part, when they do
  std::vector<ValueDifference> params;   // params.* (and prompt) that differ
  std::vector<ValueDifference> fields;   // differing output fields, in order, capped (kMaxListedFields)
  std::size_t field_difference_count = 0;  // all of them, listed or not
  double max_prob_difference = 0;  // largest |Δ| of any compared probability (steps up to the divergence)
};

// How many differing fields a RunDiff lists (the count is always complete).
inline constexpr std::size_t kMaxListedFields = 20;

struct EvidenceDiffOptions {
  double prob_tolerance = kDefaultProbTolerance;
};

struct EvidenceDiff {
  double prob_tolerance = kDefaultProbTolerance;
  std::vector<std::string> golden_files;
  std::string evidence_file;
  std::vector<RunDiff> runs;         // matched runs, in the golden's order
  std::vector<std::string> missing;  // in golden, not in the new evidence
  std::vector<std::string> extra;    // in the new evidence, not in golden
  // Listed beside the verdicts as likely causes; never counted as failures. Volatile fields
  // (created_utc, timing, environment.threads.runs_concurrently) are never compared at all.
  std::vector<ValueDifference> environment;
  std::vector<ValueDifference> provenance;  // genrepro.*, model.* (weights sha256, config), experiments

  std::size_t differing() const;
  std::size_t count(Verdict v) const;
  bool agree() const { return differing() == 0 && missing.empty() && extra.empty(); }
};

// Throws EvidenceError (naming file and JSON path) when a compared field is missing or has the
// wrong type, and UsageError for a negative or non-finite tolerance.
EvidenceDiff diff_evidence(const std::vector<EvidenceFile>& golden, const EvidenceFile& current,
                           const EvidenceDiffOptions& options);

// For `genrepro run --check-equivalence`: the same experiments run with recompute and with the
// KV cache. Runs are paired by position (run i with run i: the ids differ because use_cache is
// a parameter), params.use_cache and the id are ignored, and the pairs are diffed as above.
// Throws EvidenceError when the two hold different numbers of runs.
EvidenceDiff diff_cache_equivalence(const EvidenceFile& recompute, const EvidenceFile& cached,
                                    const EvidenceDiffOptions& options);
// KV cache and recompute are equivalent when no run's tokens diverge; probability drift within
// or beyond the tolerance is reported but does not break equivalence (different matmul shapes
// legitimately round differently).
bool tokens_equivalent(const EvidenceDiff& diff);

// One block per differing run, missing/extra runs, environment and provenance differences,
// then the summary line ("diff: 12 runs compared, 11 agree, 1 differ (1 regression), ...").
std::string format_diff_text(const EvidenceDiff& diff);
std::string diff_summary_line(const EvidenceDiff& diff);

// The --json document ("schema": "genrepro.diff/1"), shape in docs/diff.md.
EvidenceJson diff_to_json(const EvidenceDiff& diff);


}  // namespace genrepro
