#pragma once
// Two engines' runs of the same experiment, run by run (docs/engines.md, "The parity page"): how
// long their tokens stay identical, how far their probabilities part while they do, how often
// they agree on the top candidate, and whether the step where they part is a near-tie. The same
// numbers the report draws and writes to parity.csv; tests/reference/llama_engine.py recomputes
// them from the two evidence files. No libtorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"

namespace genrepro {

struct RunParity {
  std::string id;
  std::string engine_a, engine_b;
  int64_t tokens_a = 0, tokens_b = 0;
  bool tokens_equal = false;
  // The 0-based step where the chosen tokens first differ (both runs have a token there); empty
  // when one run's tokens are a prefix of the other's.
  std::optional<int64_t> divergence;
  // Steps whose input is the same in both runs: every step up to and including the divergence.
  int64_t comparable_steps = 0;
  // Of the comparable steps, those whose best candidate (top[0]) is the same token.
  int64_t same_top1 = 0;
  // The largest |ln p_a - ln p_b| of the chosen token over the steps before the divergence (the
  // same token in both), 0 when there are none.
  double max_abs_dlogp = 0;
  // The noise floor between the engines: the largest |p_a - p_b| over every candidate both list
  // at a comparable step (in the distribution the run picks from: prob_scaled for greedy, prob
  // when sampling).
  double noise = 0;
  // At the divergence: each run's deciding margin (greedy: best minus second-best prob_scaled;
  // sampled: the draw's distance to the nearest boundary of the cumulative sum, draw.margin), and
  // whether noise alone can cross either: greedy, a margin of at most twice the noise floor (two
  // probabilities, each off by up to it); sampled, at most kept x the floor (the boundary is a
  // sum over the kept tokens, each off by up to it).
  std::optional<double> margin_a, margin_b;
  bool near_tie = false;
};

// Runs of `a` and `b` with the same id whose params.engine differs, in `a`'s order.
std::vector<RunParity> engine_parity(const Evidence& a, const Evidence& b);

// The CSV the report writes (one row per run, the fields above; empty cells where a value is absent).
std::string parity_csv(const std::vector<RunParity>& runs);

}  // namespace genrepro
