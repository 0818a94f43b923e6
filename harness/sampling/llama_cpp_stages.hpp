#pragma once
// llama.cpp's samplers as stages of the one interface (stage.hpp): each wraps its function of
// llama_cpp_chain.hpp. The penalties stage keeps its own window of the last tokens, filled by
// accept() as llama.cpp's penalties sampler fills its ring buffer (the prompt first, then every
// token picked).
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "params/run_params.hpp"
#include "sampling/llama_cpp_chain.hpp"
#include "sampling/stage.hpp"

namespace genrepro::sampling {

// A sampler whose rule reads only the candidates (logit_bias, top_n_sigma, top_k, typical_p,
// top_p, min_p, temperature).
class ArrayStage : public Stage {
 public:
  using Rule = std::function<void(Candidates& cur)>;
  ArrayStage(SamplerStage which, Rule rule) : which_(which), rule_(std::move(rule)) {}
  SamplerStage stage() const override { return which_; }
  void apply(Candidates& cur, const StageContext&) override { rule_(cur); }

 private:
  SamplerStage which_;
  Rule rule_;
};

// llama_sampler_penalties: repeat, frequency and presence penalties over the last `last_n`
// accepted tokens (-1: all of them).
class PenaltiesStage : public Stage {
 public:
  PenaltiesStage(int64_t last_n, float repeat, float frequency, float presence);
  SamplerStage stage() const override { return SamplerStage::penalties; }
  void apply(Candidates& cur, const StageContext&) override;
  void accept(int64_t token) override;
  void reset() override;

 private:
  llama_cpp::PenaltyWindow window_;  // counts of the tokens in `recent_`
  std::deque<int32_t> recent_;
  float repeat_, frequency_, presence_;
};

// The stages of framework llama.cpp that `s` runs (active_stages), in its order, dist excluded.
std::vector<std::unique_ptr<Stage>> llama_cpp_stages(const SamplingParams& s);

}  // namespace genrepro::sampling
