#pragma once
// What one generation run produced: the plain data that flows from the engine (which fills it)
// to evidence.json (which stores it), diff and report (which read it). Field names match the
// evidence JSON keys (docs/evidence-format.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genrepro {

// One entry of a step's top-N list, ordered by logit (temperature and filters never reorder).
struct Candidate {
  int64_t id = 0;
  std::string text;    // the token decoded on its own (may be an incomplete UTF-8 piece, shown visibly)
  double prob = 0;     // in the final distribution the token was drawn from (0 if filtered out)
  double prob_scaled = 0;  // softmax(logits / T) over the whole vocabulary, unfiltered: the article's table
};

// One stage of a framework run's chain at one step: its name (a SamplerStage's, e.g.
// "repetition_penalty", "top_k") and the tokens still drawable after it (logit above -infinity;
// llama.cpp: in its candidate array and above -infinity).
struct StageKept {
  std::string stage;
  int64_t kept = 0;
};

// How close a sampled step's draw came to picking another token, so that a divergence in a
// sampled run can be read like a greedy one. The rule says what `margin` measures:
//  - exponential_race (torch.multinomial's one-sample race, the article's and Hugging Face's
//    draw, rng torch or portable): ln(best ratio / second-best ratio) of p / q, q ~ Exp(1); >= 0,
//    the smallest relative change of the two tokens' probabilities that swaps the winner;
//  - inverse_cdf (llama.cpp's dist: one uniform u over the cumulative distribution): the distance
//    of u to the nearest edge of the chosen token's interval, as a share of the total mass (the
//    smallest change of u that picks another token), in [0, 1].
// `runner_up` is the token that wins instead (the second-best ratio; the token across that edge).
enum class DrawRule { exponential_race, inverse_cdf };
const char* to_string(DrawRule r);  // "exponential_race", "inverse_cdf"

struct DrawRecord {
  DrawRule rule = DrawRule::exponential_race;
  double margin = 0;
  int64_t runner_up = -1;
};

// What the loop saw and did at one step.
struct StepRecord {
  int64_t step = 0;                 // 0-based index of the new token
  std::optional<int64_t> token_id;  // empty only for max_new_tokens == 0 (first prediction only)
  std::string token_text;
  double prob = 0;      // chosen token's probability in the final distribution
  double prob_t1 = 0;   // chosen token's probability at T = 1 without filters: softmax(logits)
  int64_t kept = 0;     // tokens with non-zero probability in the final distribution (nucleus size); 1 for greedy
  std::vector<Candidate> top;
  double rest_mass = 0;     // 1 - sum(top[i].prob_scaled): the article's "everything else" row
  double margin = 0;        // prob_scaled of the best minus the second-best candidate
  double logit_margin = 0;  // raw logit of the best minus the second-best candidate
  double entropy = 0;       // of the final distribution, in nats
  // Framework runs only (params.framework hf or llama.cpp): every stage that ran, in order, with
  // its kept-set count. Empty, and not written, for the article's chain.
  std::vector<StageKept> stages;
  // Sampled steps only, when another token could have been drawn (DrawRecord); absent for greedy
  // steps, a one-token distribution, and evidence from before it.
  std::optional<DrawRecord> draw;
  // "xxh64:<16 hex>" of the step's full float32 logits row as the model gave it, before
  // temperature and filters (evidence/logits_digest.hpp). Equal digests: bit-identical logits.
  // Always written by this build; empty in evidence from before it (or from other tools).
  std::optional<std::string> logits_digest;
};

enum class StopReason { eos, max_new_tokens, context_full };

struct GenerationResult {
  std::vector<int64_t> prompt_ids;
  std::vector<int64_t> output_ids;  // new tokens only, EOS included when it stopped the run
  std::vector<StepRecord> steps;
  StopReason stop_reason = StopReason::max_new_tokens;
  int64_t stop_step = 0;  // number of new tokens when the loop stopped (EOS's 1-based position for eos)
  std::optional<double> seconds;  // wall time of the loop; volatile, absent in a golden
};

const char* to_string(StopReason r);

}  // namespace genrepro
