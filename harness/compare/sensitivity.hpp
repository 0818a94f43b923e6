#pragma once
// The numerics sensitivity matrix (docs/sensitivity.md): the same experiments' evidence from
// several configuration cells (BLAS kernel, threads, numerics mode, batching, or other machines),
// each run of each cell classified against the reference cell, with what the classes say per
// cell, per axis and about the top-1/top-2 margin that predicts a flip.
//
// What the evidence can prove: it records, per step, the chosen token, its probabilities, the
// top candidates' probabilities, the probability margin and the logit margin of the best two.
// "identical" therefore means every recorded value equal, bit for bit, and, where both cells
// recorded the per-step digest of the full float32 logits (steps[].logits_digest), every digest
// equal: then it is proven bit for bit. Evidence without digests can only say the former
// (LogitsCheck::not_recorded); docs/sensitivity.md says so.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// One configuration and the evidence it produced. `axes` name what the cell set ("kernels" ->
// "SkylakeX", "threads" -> "2", ...); a cell made elsewhere (--compare) has the file as its only axis.
struct SensitivityCell {
  std::string name;
  std::map<std::string, std::string> axes;
  EvidenceFile evidence;
  // The cache axis (KV cache vs recompute) runs the experiments with use_cache set for every run,
  // which is part of each run's id: such a cell's runs are paired with the reference's by the id
  // they would have with the reference's use_cache (pairing_id), every other cell's by id.
  bool pair_ignoring_use_cache = false;
};

// The id `r` would have with use_cache false: the same for a run and its KV-cache twin.
std::string id_ignoring_use_cache(const RunRecord& r);
// The margin that decides a step's pick, in logits (docs/sensitivity.md, "The margin that decides
// a pick"): a greedy step picks the top logit, so its logit margin (top-1 minus top-2); a draw by
// the exponential race (torch.multinomial's, every sampled article and Hugging Face run) keeps its
// pick while the winner's and runner-up's logits move apart by less than temperature x the draw's
// log-ratio margin (ln p = logit / T + a constant over the kept set), so T x draw.margin. Empty
// where nothing decides in logits: llama.cpp's inverse-CDF draw (its margin is probability mass),
// a sampled step that drew nothing (one token kept), a first prediction. A sampled run of evidence
// made before draws were recorded (no step has one) falls back to the logit margin, as before.
std::optional<double> decisive_margin(const RunRecord& run, const StepRecord& step);

// For --compare, where no axis says how a cell was made: `cell` is the cache axis' cell of
// `reference` when every one of its runs has one use_cache, that is not every reference run's,
// and ignoring use_cache pairs more of its runs with the reference's than their ids do (each id
// unique either way). Such a cell is paired ignoring use_cache.
bool made_with_use_cache_forced(const Evidence& reference, const Evidence& cell);

enum class CellClass { identical, same_tokens, diverged, missing };
const char* to_string(CellClass c);  // "identical", "same_tokens", "diverged", "missing"

// One run of one cell against the same run of the reference cell.
// Whether the full logits were compared: both cells recorded a digest of every step's float32
// logits (steps[].logits_digest, by the same algorithm) and the steps both ran were compared.
enum class LogitsCheck { not_recorded, equal, differ };
const char* to_string(LogitsCheck c);  // "not_recorded", "equal", "differ"

struct RunVsReference {
  CellClass cls = CellClass::missing;
  // identical and same_tokens: what the digests said over the shared steps. identical with
  // logits equal is proven bit for bit; identical with not_recorded means every *recorded* value
  // is equal (the logits below the listed candidates were not compared). A run whose recorded
  // values all agree but whose digests differ is same_tokens, with logits differ.
  LogitsCheck logits = LogitsCheck::not_recorded;
  // Over the steps both cells share before any divergence: the largest |difference| of a recorded
  // probability (prob, prob_t1, candidates' prob and prob_scaled, margin) and of logit_margin.
  double max_prob_delta = 0;
  double max_logit_margin_delta = 0;
  // diverged: the first new token that differs (0-based, as "new token N" counts from 1: N = k + 1).
  int64_t diverged_at = -1;
  double reference_margin = 0, cell_margin = 0;              // probability margins at that step
  double reference_logit_margin = 0, cell_logit_margin = 0;  // logit margins at that step
  // Where this cell's pick stands in the reference's candidates at that step (0 = its best);
  // absent when the reference did not list it, or the run stopped there in one cell.
  std::optional<int64_t> rank_in_reference;
  // Sampled runs: how close each cell's draw at that step came to another token (steps[].draw);
  // absent where the step recorded none (greedy, one token left, evidence from before it).
  std::optional<DrawRecord> reference_draw, cell_draw;
  // decisive_margin at that step in each cell (what the predictor and diff --sensitivity judge).
  std::optional<double> reference_decisive_margin, cell_decisive_margin;
};

struct CellSummary {
  std::size_t identical = 0, same_tokens = 0, diverged = 0, missing = 0;
  std::size_t identical_logits_equal = 0;  // of `identical`: proven by the logits digests
  // survival[t]: share of the runs compared whose tokens still agree after t new tokens
  // (t = 0 .. the longest run); a run shorter than t that never diverged still counts as agreeing.
  std::vector<double> survival;
};

// One cell that differs from the reference in exactly one axis: what that axis, changed alone, does.
struct AxisEffect {
  std::string axis, value, cell;
  std::size_t runs = 0, same_tokens = 0, diverged = 0;
};

// "Margin below m* predicts a flip", judged on the reference cell's steps: a step flips when some
// cell's run diverges there; a step is flagged when its logit margin is at most m*.
struct MarginPredictor {
  std::size_t flips = 0;  // (run, cell) divergences
  std::size_t flips_not_judged = 0;  // of them, at a step without a decisive margin (not in m*)
  std::size_t steps_not_judged = 0;  // reference steps without one: neither flagged nor counted in `steps`
  double noise_floor = 0;  // the largest |Δ logit_margin| on matched steps, over every cell
  std::optional<double> m_star;  // the largest reference logit margin at a flip; absent without flips
  std::size_t steps = 0, flagged = 0, flip_steps = 0, flip_steps_flagged = 0;
  double precision() const { return flagged ? double(flip_steps_flagged) / double(flagged) : 0; }
  double recall() const { return flip_steps ? double(flip_steps_flagged) / double(flip_steps) : 0; }
  double share_flagged() const { return steps ? double(flagged) / double(steps) : 0; }
};

// The predictor judged on a cell it was not fitted to (leave one cell out): m* fitted on every
// other cell's flips, "logit margin <= m*" judged on this cell's runs. A run that diverged is judged
// on the reference's steps up to and including the divergence (after it the cell's run is on
// another path, so those steps can neither flip nor be judged); every other run on all its steps.
struct HeldOutCell {
  std::string cell;
  std::optional<double> m_star;  // fitted without this cell; absent when no other cell flipped
  std::size_t flips = 0, caught = 0;  // this cell's divergences; those at a margin <= m_star
  std::size_t steps = 0, flagged = 0, flagged_flips = 0;
  std::optional<double> recall() const { return flips ? std::optional<double>(double(caught) / double(flips)) : std::nullopt; }
  std::optional<double> precision() const {
    return flagged ? std::optional<double>(double(flagged_flips) / double(flagged)) : std::nullopt;
  }
  double share_flagged() const { return steps ? double(flagged) / double(steps) : 0; }
};

// Leave-one-cell-out over every non-reference cell with a compared step or a flip. The overall
// recall (caught / flips over every held-out cell) needs at least two cells with flips: with one,
// holding it out leaves no flip to fit m* to, which says nothing about the rule.
struct HeldOutPredictor {
  std::vector<HeldOutCell> cells;
  std::size_t cells_with_flips = 0, flips = 0, caught = 0;
  bool enough() const { return cells_with_flips >= 2; }
  std::optional<double> recall() const {
    return enough() && flips ? std::optional<double>(double(caught) / double(flips)) : std::nullopt;
  }
};

// The classic nondeterminism experiment: the copies of one run (an entry's "replicas"), which can differ
// only through the arithmetic around them (an inexact batch puts copies in different rows). Per
// cell, how many distinct completions (output ids) its copies gave.
struct ReplicaGroup {
  std::string run;                        // copy 0's id, as the reference cell has it
  std::size_t copies = 0;                 // copies in the reference cell (>= 2)
  std::vector<std::size_t> present;       // [cell] copies the cell holds
  std::vector<std::size_t> distinct;      // [cell] distinct completions among them
  std::vector<std::size_t> most_common;   // [cell] copies that gave the most common completion
  // [cell] copies whose completion is not the reference cell's copy 0's: one distinct completion
  // can still be another than the reference's (every row of a batch rounding alike).
  std::vector<std::size_t> unlike_reference;
};

struct SensitivityMatrix {
  std::vector<SensitivityCell> cells;
  std::size_t reference = 0;
  std::vector<std::string> run_ids;                  // the reference cell's runs, in its order
  std::vector<std::vector<RunVsReference>> runs;     // [run][cell]
  std::vector<CellSummary> summaries;                // [cell]
  std::vector<AxisEffect> attribution;
  MarginPredictor predictor;
  HeldOutPredictor held_out;
  std::vector<ReplicaGroup> replica_groups;  // in the order of their copy 0 in the reference
};

// Every cell against cells[reference]. Runs only some cells hold are "missing" in the others;
// runs the reference lacks are not compared (the reference decides what the matrix is about).
SensitivityMatrix build_sensitivity(std::vector<SensitivityCell> cells, std::size_t reference);

// DIR/sensitivity.json (docs/schema/sensitivity.schema.json) and its Markdown report.
OrderedJson sensitivity_to_json(const SensitivityMatrix& m);

// The words the Markdown and the HTML page share: "66.7 %" ("-" of nothing), and a cell's axes as
// "kernels=portable, threads=2" ("-" for none).
std::string sensitivity_share_text(std::size_t part, std::size_t whole);
std::string sensitivity_axes_text(const std::map<std::string, std::string>& axes);
std::string sensitivity_markdown(const SensitivityMatrix& m);
// "1 (all 64 of 64)", "2 (most common: 48 of 64; 16 unlike the reference's copy 0)", "-" when the cell holds no copy: a replica
// group in one cell, as the Markdown and the HTML page write it.
std::string replica_group_cell_text(const ReplicaGroup& g, std::size_t c);
// One paragraph: what the held-out predictor found, or why there is no held-out recall (the
// Markdown and the HTML page say the same).
std::string held_out_summary(const HeldOutPredictor& h);

}  // namespace genrepro
