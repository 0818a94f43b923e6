#include "sampling/chain.hpp"

#include <algorithm>
#include <utility>

#include "util/errors.hpp"

namespace genrepro::sampling {

namespace {

// framework_sampler.cpp's nothing_left, where the caller names the row.
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

Chain::Chain(std::vector<std::unique_ptr<Stage>> stages, std::unique_ptr<Draw> draw, ChainStart start)
    : stages_(std::move(stages)),
      draw_(std::move(draw)),
      prompt_length_(static_cast<int64_t>(start.history.size())),
      eos_token_id_(start.eos_token_id) {
  for (int64_t token : start.history) accept(token);
}

ChainStep Chain::step(const std::vector<float>& logits, bool pick) {
  ChainStep out;
  Candidates cur(logits.data(), logits.size());
  const StageContext context{history_, prompt_length_, eos_token_id_};
  for (const auto& stage : stages_) {
    stage->apply(cur, context);
    out.stages.push_back({stage->name(), cur.finite_ids()});
    if (out.stages.back().kept.empty()) nothing_left(stage->name());
  }
  if (cur.finite_count() == 0) nothing_left("first");
  out.pick = draw_->draw(cur, pick);
  out.final = final_distribution(cur);
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
