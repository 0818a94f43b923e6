#pragma once
// llama.cpp's CPU sampler chain, rule for rule (docs/sampling.md, "llama.cpp"): the
// samplers of src/llama-sampler.cpp in the release node-llama-cpp 3.22.1 ships (its libllama is
// what tests/reference/llama_cpp_sampling.py drives), written here over the same data layout. They
// work on a candidate array, not a [V] tensor: stages shrink and reorder it (top-k sorts by logit,
// typical by its own score), and the dist sampler draws by scanning the array in its current order,
// so to pick what llama.cpp picks the order must be llama.cpp's too. That is why the sorts below
// are llama.cpp's own calls (std::partial_sort up to 128, its 128-bucket sort above, std::sort),
// compared in the same way (a.logit > b.logit), and the arithmetic is its float32 arithmetic
// (expf, logf, powf, float sums; double only where llama.cpp uses double).
//
// No libtorch: the engine turns the final array into a [V] distribution (engine/run_chain.cpp),
// and the model-free chain (sampling/chain.hpp) runs the same functions as its llama.cpp preset.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "sampling/candidates.hpp"

namespace genrepro::llama_cpp {

// The candidate array (sampling/candidates.hpp), under the names llama.cpp's samplers use.
using Candidate = sampling::Candidate;
using Candidates = sampling::Candidates;

// The token counts of the penalties' window: the last `last_n` tokens of `history` (all of them
// when last_n is -1 or longer than the history), prompt included: what llama-completion accepts
// into its sampler (tools/completion: every prompt token, then every token picked).
struct PenaltyWindow {
  int64_t last_n = 0;                       // 0: the penalties are off
  std::unordered_map<int32_t, int> counts;  // token -> occurrences in the window
};
PenaltyWindow penalty_window(const std::vector<int64_t>& history, int64_t last_n);

// The samplers. Each leaves `cur` as llama.cpp's sampler of the same name would.
void logit_bias(Candidates& cur, const std::vector<std::pair<int32_t, float>>& biases);  // llama_sampler_logit_bias
void penalties(Candidates& cur, const PenaltyWindow& window, float repeat, float freq, float present);  // penalties
void top_n_sigma(Candidates& cur, float n);
void top_k(Candidates& cur, int32_t k);
void typical(Candidates& cur, float p, size_t min_keep);
// top-p keeps a scratch buffer between calls in llama.cpp (its buf_sort); `scratch` is that buffer.
void top_p(Candidates& cur, float p, size_t min_keep, std::vector<Candidate>& scratch);
void min_p(Candidates& cur, float p, size_t min_keep);
void temp_ext(Candidates& cur, float temp, float delta, float exponent);  // temperature (delta 0: plain)

// How close dist's draw came to another token: the chosen candidate's interval of the running sum
// is (before, after]; `distance` is min(target - before, after - target) / sum, the smallest change
// of u that picks another token, and `runner_up` the token across that edge (the nearest
// candidate with p > 0 on that side). Absent when no other candidate has p > 0.
struct CdfEdge {
  double distance = 0;
  int32_t runner_up = -1;
};

// The dist sampler: std::mt19937 seeded with `seed` (llama_sampler_init_dist(seed), seed below
// LLAMA_DEFAULT_SEED), one std::uniform_real_distribution<double>(0, 1) draw per call, even when
// one candidate is left.
class Dist {
 public:
  explicit Dist(uint32_t seed) : rng_(seed) {}
  // Computes every candidate's p (expf(logit - max), summed in double, then normalised), draws,
  // and sets cur.selected: the first candidate, in the array's order, at which the running sum
  // of the unnormalised p reaches sum * u. Returns how close that was to another candidate.
  std::optional<CdfEdge> apply(Candidates& cur);
  // The p the draw would use, without drawing (a first-prediction record).
  static void probabilities(Candidates& cur);

 private:
  // expf(logit - max) into every p (unnormalised); returns their sum in double. cur.size >= 1.
  static double unnormalised_weights(Candidates& cur);

  std::mt19937 rng_;
};

}  // namespace genrepro::llama_cpp
