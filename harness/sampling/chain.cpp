#include "sampling/chain.hpp"

#include <algorithm>
#include <utility>

#include "util/errors.hpp"

namespace genrepro::sampling {

namespace {

// The engine adds the step (engine/run_chain.cpp).
[[noreturn]] void nothing_left(const std::string& stage) {
  throw NumericsError("no token is left to pick after the " + stage +
                      " stage (every logit is -infinity); the masks and biases (suppress_tokens, bad_words_ids, logit_bias, "
                      "min_new_tokens) remove the whole vocabulary; remove fewer tokens");
}

std::vector<Candidate> final_distribution(const Candidates& cur) {
  std::vector<Candidate> out;
  for (size_t i = 0; i < cur.size; ++i)
    if (cur.data[i].p > 0) out.push_back(cur.data[i]);
  std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) { return a.p != b.p ? a.p > b.p : a.id < b.id; });
  return out;
}

}  // namespace

Chain::Chain(std::vector<std::unique_ptr<Stage>> stages, std::unique_ptr<Draw> draw, ChainStart start, const RowMath& math)
    : stages_(std::move(stages)), draw_(std::move(draw)), math_(math) {
  restart(std::move(start));
}

void Chain::restart(ChainStart start) {
  history_.clear();
  for (const auto& stage : stages_) stage->reset();
  for (int64_t token : start.history) accept(token);
  prompt_length_ = start.prompt_length < 0 ? static_cast<int64_t>(history_.size()) : start.prompt_length;
  eos_token_id_ = start.eos_token_id;
  lists_ = start.lists;
}

ChainStep Chain::step(const std::vector<float>& logits, bool pick) { return step(logits.data(), logits.size(), pick); }

ChainStep Chain::step(const float* logits, size_t n, bool pick) {
  ChainStep out;
  Candidates cur(logits, n);
  const StageContext context{history_, prompt_length_, eos_token_id_, math_};
  for (const auto& stage : stages_) {
    stage->apply(cur, context);
    StageOutcome outcome{stage->name(), cur.finite_count(), {}};
    if (lists_) outcome.kept = cur.finite_ids();
    if (outcome.count == 0) nothing_left(outcome.stage);
    out.stages.push_back(std::move(outcome));
  }
  if (stages_.empty() && cur.finite_count() == 0) nothing_left("first");  // else the last stage's count said it
  out.pick = draw_->draw(cur, pick);
  if (lists_) out.final = final_distribution(cur);
  out.after = std::move(cur);
  return out;
}

void Chain::accept(int64_t token) {
  history_.push_back(token);
  for (const auto& stage : stages_) stage->accept(token);
}

std::vector<std::string> Chain::stage_names() const {
  std::vector<std::string> names;
  for (const auto& stage : stages_) names.push_back(stage->name());
  return names;
}

}  // namespace genrepro::sampling
