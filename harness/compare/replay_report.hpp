#pragma once
// What `genrepro replay` found, and how it is shown: the drift of every golden token's
// log-probability, per run and pooled (docs/diff.md, "replay"). No libtorch here: the engine
// (engine/replay.hpp) fills a ReplayReport; the CLI prints it as text or JSON.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/numerics_record.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// Default bound on |Δ log p| for a run to pass. docs/diff.md's 1e-4 absolute probability
// tolerance comes from logits moving by |Δz| <= ~5e-5 under another BLAS or vector width; a
// log-probability moves by at most 2·max|Δz| = 1e-4 then (Δ log p_i = Δz_i - Σ_j p_j Δz_j),
// whatever p is. That is the same bound in log space, and it is stricter than diff for small
// probabilities, where an absolute tolerance hides a large relative drift. A regression
// (wrong epsilon, cache position off by one) moves log-probabilities by 1e-2 and more.
inline constexpr double kDefaultLogProbTolerance = 1e-4;

// Which logits source replays a run.
enum class ReplayForward {
  as_run,     // the run's own: recompute when params.use_cache is false, else the KV cache
  recompute,  // every run through the recompute path (measures what the cache changes)
  cached,     // every run through the KV cache
};
const char* to_string(ReplayForward f);  // "as-run", "recompute", "cached"
// Throws UsageError naming --forward for anything else.
ReplayForward parse_replay_forward(const std::string& text);

// A golden whose weights differ from the model replayed against.
struct ModelMismatch {
  std::string golden_file;
  std::string golden_sha256;
  std::string model_sha256;
};

// |Δ log p| over a set of (golden, current) probability pairs.
struct Drift {
  int64_t compared = 0;  // pairs with both probabilities > 0 (or equal)
  double max = 0;        // largest |log p_current - log p_golden|
  double sum = 0;        // of |Δ log p| over the compared pairs (mean = sum / compared)
  std::optional<int64_t> max_step;      // step of the max (empty when nothing drifted)
  std::optional<int64_t> max_token_id;  // the golden token (or candidate) there
  // Pairs where exactly one probability is 0: |Δ log p| is infinite, so they are counted here
  // and never enter max or mean (the output holds no infinity and no NaN).
  int64_t infinite = 0;
  std::optional<int64_t> first_infinite_step;

  double mean() const { return compared > 0 ? sum / static_cast<double>(compared) : 0.0; }
  void add(double golden_prob, double current_prob, int64_t step, int64_t token_id);
};

// A framework run's first step where a stage now keeps another number of tokens than the golden
// recorded (every step of an hf or llama.cpp run lists its stages' kept counts).
struct StageDifference {
  int64_t step = 0;
  std::string stage;                 // the golden's stage there (or this build's, past the golden's list)
  std::optional<int64_t> golden_kept;  // empty: the golden lists no stage there
  std::optional<int64_t> now_kept;     // empty: this build runs no stage of that name there
};

// The golden's per-step logits digests (steps[].logits_digest) against the digests of the
// logits this replay computed from the same prefix. Drift within tolerance says "close"; equal
// digests at every step say the replay reproduced the golden's float32 logits bit for bit.
struct DigestCheck {
  int64_t compared = 0;  // steps where the golden recorded a digest of the algorithm this build computes
  int64_t equal = 0;
  std::optional<int64_t> first_difference;  // step of the first digest that differs
  bool all_equal() const { return compared > 0 && equal == compared; }
};

struct ReplayRun {
  std::string id;
  std::string golden_file;
  bool use_cache = false;  // the logits source the replay used
  // max_new_tokens 0 runs hold no token: their top candidates are compared instead (every
  // candidate with golden prob > 0; `logp` over top[].prob, `logp_unfiltered` over
  // top[].prob_scaled). Token runs compare each step's chosen token: `logp` over steps[].prob,
  // `logp_unfiltered` over steps[].prob_t1.
  bool first_prediction = false;
  int64_t steps = 0;  // golden steps replayed
  Drift logp;             // in the final distribution; logp.infinite = golden token outside the kept set now
  Drift logp_unfiltered;  // softmax(logits) at T = 1 (prob_t1), or softmax(logits / T) for candidates
  // First step where this build, given the golden prefix, would pick another token (argmax, or
  // the run's seeded picker); empty when it picks every golden token.
  std::optional<int64_t> own_choice_diverges_at;
  // Framework runs (hf, llama.cpp) only: steps whose stage list and counts were compared, how
  // many differ, and the first difference. Shown beside the drift, never a failure by itself:
  // drift within tolerance can move a boundary token across a stage's cut, as it can the kept
  // size of diff (a golden token that left the kept set is counted in logp.infinite).
  DigestCheck digests;
  int64_t stage_steps_compared = 0;
  int64_t stage_steps_differing = 0;
  std::optional<StageDifference> first_stage_difference;

  int64_t outside_kept() const { return logp.infinite; }
  // max |Δ log p| and max |Δ log p_t1| within the tolerance and no golden token outside the kept set.
  bool within(double tolerance) const;
};

struct ReplayReport {
  double logprob_tolerance = kDefaultLogProbTolerance;
  ReplayForward forward = ReplayForward::as_run;
  // The forward recomputed: strict for strict evidence, else libtorch's reference one-run path.
  NumericsMode numerics = NumericsMode::reference;
  std::vector<std::string> golden_files;
  std::string model_dir;
  std::string model_sha256;  // of model.safetensors
  std::vector<ModelMismatch> model_mismatches;  // only with allow_model_mismatch (else it throws)
  std::vector<ReplayRun> runs;  // in golden order
  Drift logp;             // all runs pooled (max_step, max_token_id: within max_run)
  Drift logp_unfiltered;
  std::string max_run;    // id of the run holding logp.max (empty when nothing drifted)

  std::size_t beyond_tolerance() const;
  bool within() const { return beyond_tolerance() == 0; }
};

// One line for stderr ("golden.json was made with model.safetensors sha256 1a2b..., ...").
std::string describe_mismatch(const ModelMismatch& m);

// The readable report: one table row per run, then the summary line
// ("replay: 12 runs, 12 within tolerance 0.0001, 0 beyond; ...").
std::string format_replay_text(const ReplayReport& report);
std::string replay_summary_line(const ReplayReport& report);
// "logits: 3 of 4 runs bit-identical to the golden at every step (digests); 1 differs (first: x/p0/... from
// new token 2)", or why nothing was compared.
std::string replay_digest_line(const ReplayReport& report);
// The --json document (schema "genrepro.replay/1", docs/diff.md).
OrderedJson replay_to_json(const ReplayReport& report);

}  // namespace genrepro
