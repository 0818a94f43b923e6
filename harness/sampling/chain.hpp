#pragma once
// A sampler chain: an ordered list of stages (stage.hpp), then the draw (draws.hpp), and the token
// history the stages read, as llama.cpp's llama_sampler_chain holds its samplers. A chain is made
// once per sequence (presets.hpp makes each framework's from a checked SamplingParams) and stepped
// once per logits row; accept() appends the picked token, as generation does. No libtorch: the
// engine keeps its torch chains (engine/samplers.hpp, engine/framework_sampler.hpp), whose bits
// this one follows (docs/sampling.md, "The model-free chain").
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sampling/candidates.hpp"
#include "sampling/draws.hpp"
#include "sampling/stage.hpp"

namespace genrepro::sampling {

// The sequence a chain starts from: the prompt (or any history), and the end-of-text token.
struct ChainStart {
  std::vector<int64_t> history;
  int64_t eos_token_id = -1;
};

// What one stage left: the tokens still drawable (logit above -infinity), ascending.
struct StageOutcome {
  std::string stage;
  std::vector<int32_t> kept;
};

struct ChainStep {
  std::vector<StageOutcome> stages;  // each stage that ran, in order
  // The distribution drawn from: every token with p > 0, by descending p (then ascending id).
  std::vector<Candidate> final;
  std::optional<Drawn> pick;  // empty when asked not to pick
};

class Chain {
 public:
  // Accepts every token of start.history into the stages that keep their own (llama.cpp accepts the
  // prompt before the first sample).
  Chain(std::vector<std::unique_ptr<Stage>> stages, std::unique_ptr<Draw> draw, ChainStart start);

  // logits [n] float32 -> every stage in order -> the draw. `pick` false: the distribution only,
  // no generator consumed. Throws NumericsError naming the stage when a stage leaves no token.
  ChainStep step(const std::vector<float>& logits, bool pick = true);
  // Appends `token` to the history and hands it to every stage (llama_sampler_accept).
  void accept(int64_t token);

  std::vector<std::string> stage_names() const;
  const char* draw_name() const { return draw_->name(); }
  const std::vector<int64_t>& history() const { return history_; }

 private:
  std::vector<std::unique_ptr<Stage>> stages_;
  std::unique_ptr<Draw> draw_;
  std::vector<int64_t> history_;
  int64_t prompt_length_ = 0;
  int64_t eos_token_id_ = -1;
};

}  // namespace genrepro::sampling
