#pragma once
// Compares GOLDEN evidence against NEW evidence and explains every run that parted: where the
// tokens first diverged, what both runs thought of both tokens there, and why (a float near-tie,
// a changed kept set, a changed sampler or RNG, or a regression of the model itself).
// docs/diff.md documents the tolerance, the classification precedence and the --json shape.
// No libtorch. One file per stage: evidence is read by read_evidence / read_golden
// (evidence.hpp); runs are compared and classified in run_diff.cpp, documents in
// evidence_diff.cpp; diff_format.hpp shows the result as text or JSON.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// Absolute tolerance for every compared probability (and entropy, in nats). docs/diff.md gives
// the reasoning: float32 logits of GPT-2 (|z| ~ 100, ulp ~ 8e-6) reordered by another BLAS or
// vector width move by ~1e-5..1e-4, which moves a probability p by at most ~2·|Δz|·p <= 1e-4 at
// p = 0.5; real regressions (a wrong layer-norm epsilon, a bad cache position, a transposed
// weight) move the leading probabilities by 1e-3 and more.
inline constexpr double kDefaultProbTolerance = 1e-4;

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
  OrderedJson golden;   // null when absent on that side
  OrderedJson current;  // the new evidence's value
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
  // The reason without this run's numbers (step, sizes, |dp|): runs with the same verdict and
  // cause are shown as one group when many runs differ (diff_format.cpp).
  std::string cause;
  // First step with any difference (tokens, kept, probabilities beyond tolerance, token text);
  // empty when the difference is run-level only (text, stop, params).
  std::optional<int64_t> first_difference_step;
  std::optional<Divergence> divergence;  // where the token sequences part, when they do
  std::vector<ValueDifference> params;   // params.* (and prompt) that differ
  std::vector<ValueDifference> fields;   // differing output fields, in order, capped (kMaxListedFields)
  std::size_t field_difference_count = 0;  // all of them, listed or not
  double max_prob_difference = 0;  // largest |Δ| of any compared probability (steps up to the divergence)
  // Beside the verdict and never part of it: whether the two runs' logits were
  // bit-identical at every step, by the steps' logits digests. true: every step's digest equal and
  // as many steps on both sides; false: logits_first_difference_step is the first step whose
  // digests differ (or, when all shared steps agree, the first step only one run has); empty: a run
  // records no digests, or the two runs' digests name other algorithms (not comparable).
  std::optional<bool> logits_identical;
  std::optional<int64_t> logits_first_difference_step;
};

// How many differing fields a RunDiff lists (the count is always complete).
inline constexpr std::size_t kMaxListedFields = 20;

// A golden run and the new run that replaced it in the same experiment cell (run_pairing.hpp):
// what changed, where the tokens part, and what the change did to the nucleus and the stop.
struct PairedRun {
  std::string golden_id;
  std::string new_id;
  std::string change;  // every differing parameter (and the prompt): "top_p 0.9 → 0.95, seed 1 → 2"
  RunDiff diff;        // diff_run(golden, new): first divergence, differing fields, the cause
  // Nucleus sizes (kept) over the steps both runs took with the same context: up to and
  // including the first divergent step; the mean of each side. `shared_steps` 0: none.
  std::size_t shared_steps = 0;
  double golden_kept_mean = 0;
  double new_kept_mean = 0;
  // The median kept over each whole run (after the divergence the contexts differ, so this is
  // the change's effect on the run, not a like-for-like comparison); empty for a run without steps.
  std::optional<double> golden_kept_median;
  std::optional<double> new_kept_median;
  StopReason golden_stop = StopReason::max_new_tokens;
  int64_t golden_stop_step = 0;
  StopReason new_stop = StopReason::max_new_tokens;
  int64_t new_stop_step = 0;
};
// "parameter change: top_p 0.9 → 0.95": the verdict of a pair.
std::string pair_verdict(const PairedRun& pair);
PairedRun describe_pair(const RunRecord& golden, const RunRecord& current, double prob_tolerance);

struct EvidenceDiffOptions {
  double prob_tolerance = kDefaultProbTolerance;
  // Pair missing with extra runs by these keys (run_pairing.hpp; empty: match by id only, as
  // before pairing existed). `genrepro diff` pairs by kDefaultPairBy unless told otherwise.
  std::vector<std::string> pair_by;
};

struct EvidenceDiff {
  double prob_tolerance = kDefaultProbTolerance;
  std::vector<std::string> golden_files;
  std::string evidence_file;
  std::vector<RunDiff> runs;         // matched runs, in the golden's order
  std::vector<std::string> missing;  // in golden, not in the new evidence, and in no pair
  std::vector<std::string> extra;    // in the new evidence, not in golden, and in no pair
  // A golden id absent from the new evidence whose experiment cell a new id took (pair_by):
  // out of missing and extra, and still failing the gate (agree() is false while any exist).
  std::vector<PairedRun> pairs;
  std::vector<std::string> pair_by;  // the keys the pairs were made by (empty: no pairing)
  // Listed beside the verdicts as likely causes; never counted as failures. Volatile fields
  // (created_utc, timing, environment.threads.runs_concurrently) are never compared at all.
  std::vector<ValueDifference> environment;
  // numerics.mode / numerics.tile (docs/numerics.md), and llama_cpp.* (the settings that decide
  // llama.cpp's bits, docs/engines.md): causes of their own; bits differ in the last place
  // between them by design, so the tolerances apply as they do across machines.
  std::vector<ValueDifference> numerics;
  std::vector<ValueDifference> provenance;  // genrepro.*, model.* (weights sha256, config; not the path)

  std::size_t differing() const;
  std::size_t count(Verdict v) const;
  // Runs that agree within the tolerance whose logits digests say the logits were not bit-identical.
  std::size_t agreeing_with_other_logits() const;
  bool agree() const { return differing() == 0 && missing.empty() && extra.empty() && pairs.empty(); }
};

// Every run of `golden` matched by id with `current`'s; throws UsageError for a negative or
// non-finite tolerance. The evidence was checked when it was read: nothing else can be wrong.
EvidenceDiff diff_evidence(const std::vector<EvidenceFile>& golden, const EvidenceFile& current,
                           const EvidenceDiffOptions& options);

// One run against another (diff_evidence pairs them by id); the tolerance as diff_evidence checked it.
RunDiff diff_run(const RunRecord& golden, const RunRecord& current, double prob_tolerance);

// For `genrepro run --check-equivalence`: the same planned runs executed with recompute and with
// the KV cache (engine/runner.hpp), so run ids are the experiment files' in both. Runs are
// matched by id and diffed as above, except for params.use_cache, the one parameter the two
// passes set differently.
EvidenceDiff diff_cache_equivalence(const EvidenceFile& recompute, const EvidenceFile& cached,
                                    const EvidenceDiffOptions& options);
// KV cache and recompute are equivalent when no run's tokens diverge; probability drift within
// or beyond the tolerance is reported but does not break equivalence (different matmul shapes
// legitimately round differently).
bool tokens_equivalent(const EvidenceDiff& diff);

}  // namespace genrepro
