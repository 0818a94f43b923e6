#pragma once
// A stage of the article's or Hugging Face's chain: its rule works on the whole row of scores [V]
// in id order, as their torch code works on a [V] or [1, V] tensor (article_rules.hpp,
// hf_rules.hpp), and masks with -infinity; the candidate array stays whole and in id order.
#include <functional>
#include <utility>
#include <vector>

#include "sampling/stage.hpp"

namespace genrepro::sampling {

class RowStage : public Stage {
 public:
  using Rule = std::function<void(std::vector<float>& scores, const StageContext& context)>;
  RowStage(SamplerStage which, Rule rule) : which_(which), rule_(std::move(rule)) {}

  SamplerStage stage() const override { return which_; }
  // Throws std::logic_error when `cur` is not the whole vocabulary in id order (a chain that mixed
  // these stages with llama.cpp's, which no preset does).
  void apply(Candidates& cur, const StageContext& context) override;

 private:
  SamplerStage which_;
  Rule rule_;
  std::vector<float> scores_;  // the row the rule works on, kept between steps: a new one is zero-filled first
};

}  // namespace genrepro::sampling
