#pragma once
// A sampler chain: an ordered list of stages (stage.hpp), then the draw (draws.hpp), and the token
// history the stages read, as llama.cpp's llama_sampler_chain holds its samplers. A chain is made
// once per sequence (presets.hpp makes each framework's from a checked SamplingParams) and stepped
// once per logits row; accept() appends the picked token, as generation does. No libtorch: the
// float32 operations whose bits depend on who computes them go through the RowMath the chain is
// given (row_math.hpp): the engine gives libtorch's, `genrepro sample` the written-out kernels
// (docs/sampling.md, "One chain").
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sampling/candidates.hpp"
#include "sampling/draws.hpp"
#include "sampling/row_math.hpp"
#include "sampling/stage.hpp"

namespace genrepro::sampling {

// The sequence a chain starts from: the prompt (or any history), and the end-of-text token.
struct ChainStart {
  std::vector<int64_t> history;
  int64_t eos_token_id = -1;
  // Where the prompt ends in `history` (min_new_tokens counts from there); -1: all of it.
  int64_t prompt_length = -1;
  // Whether a step lists the kept ids of each stage and the final distribution by probability
  // (`sample` prints them), or leaves both empty: the loop records counts and reads `after`, and
  // listing and sorting 50,257 entries per stage per step would cost more than the stages.
  bool lists = true;
};

// What one stage left: how many tokens are still drawable (logit above -infinity), and their ids,
// ascending, when the chain lists them.
struct StageOutcome {
  std::string stage;
  int64_t count = 0;
  std::vector<int32_t> kept;
};

struct ChainStep {
  std::vector<StageOutcome> stages;  // each stage that ran, in order
  // The distribution drawn from: every token with p > 0, by descending p (then ascending id).
  // Empty when the chain does not list (ChainStart::lists).
  std::vector<Candidate> final;
  std::optional<Drawn> pick;  // empty when asked not to pick
  // The candidate array as the last stage and the draw left it (every p set by the draw).
  Candidates after{nullptr, 0};
};

class Chain {
 public:
  // Accepts every token of start.history into the stages that keep their own (llama.cpp accepts the
  // prompt before the first sample).
  // `math` must outlive the chain (and be the one the draw was made with).
  Chain(std::vector<std::unique_ptr<Stage>> stages, std::unique_ptr<Draw> draw, ChainStart start,
        const RowMath& math = aten_float_math());

  // logits [n] float32 -> every stage in order -> the draw. `pick` false: the distribution only,
  // no generator consumed. Throws NumericsError naming the stage when a stage leaves no token, and
  // NoDistribution (draws.hpp) when the draw has nothing to draw from.
  ChainStep step(const std::vector<float>& logits, bool pick = true);
  ChainStep step(const float* logits, size_t n, bool pick = true);
  // Appends `token` to the history and hands it to every stage (llama_sampler_accept).
  void accept(int64_t token);
  // Starts again from `start` (the stages forget what they accepted) with the same draw, whose
  // generator goes on where it was: one generator over rows of unrelated histories.
  void restart(ChainStart start);

  std::vector<std::string> stage_names() const;
  const char* draw_name() const { return draw_->name(); }
  const std::vector<int64_t>& history() const { return history_; }

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
  std::unique_ptr<Draw> draw_;
  const RowMath& math_;
  std::vector<int64_t> history_;
  int64_t prompt_length_ = 0;
  int64_t eos_token_id_ = -1;
  bool lists_ = true;
};

}  // namespace genrepro::sampling
