#include "engine/run_chain.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "engine/torch_row_math.hpp"
#include "sampling/presets.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// The controls' token lists name ids of the model's vocabulary (plan_runs checks experiment files
// before any run; this catches `generate`'s flags, whose ids meet the vocabulary only here).
void check_token_ids(const FrameworkControls& c, int64_t vocab) {
  const std::optional<std::string> outside = sampling::control_id_outside(c, vocab);
  if (!outside) return;
  std::string flag = outside->substr(0, outside->find(' '));  // "suppress_tokens holds token id 9"
  for (char& ch : flag)
    if (ch == '_') ch = '-';
  throw UsageError("--" + flag + outside->substr(outside->find(' ')) + ", which is not allowed; allowed: ids from 0 to " +
                   std::to_string(vocab - 1) + " (the model's vocabulary)");
}

std::optional<DrawRecord> draw_record(const std::optional<sampling::Drawn>& drawn) {
  if (!drawn || !drawn->margin) return std::nullopt;
  const DrawRule rule = drawn->margin->rule == "inverse_cdf" ? DrawRule::inverse_cdf : DrawRule::exponential_race;
  return DrawRecord{rule, drawn->margin->margin, drawn->margin->runner_up};
}

torch::Tensor as_tensor(const std::vector<float>& values) {
  torch::Tensor out = torch::empty({static_cast<int64_t>(values.size())}, torch::kFloat32);
  if (!values.empty()) std::memcpy(out.data_ptr<float>(), values.data(), values.size() * sizeof(float));
  return out;
}

// The distribution the record reads, over the vocabulary in id order.
torch::Tensor record_distribution(const sampling::Candidates& after, int64_t vocab, bool argmax) {
  if (argmax) {
    // greedy: softmax of the scores at T = 1 (the argmax was taken on them). The candidates of an
    // argmax preset are the whole vocabulary in id order.
    std::vector<float> scores(after.size);
    for (size_t i = 0; i < after.size; ++i) scores[i] = after.data[i].logit;
    return as_tensor(torch_row_math().softmax(scores));
  }
  // Each candidate's p at its id (llama.cpp's stages shrink and reorder the array).
  torch::Tensor probs = torch::zeros({vocab}, torch::kFloat32);
  float* p = probs.data_ptr<float>();
  for (size_t i = 0; i < after.size; ++i) p[after.data[i].id] = after.data[i].p;
  return probs;
}

}  // namespace

RunChain::RunChain(const SamplingParams& s, std::vector<int64_t> history, int64_t eos_token_id)
    : params_(s),
      eos_token_id_(eos_token_id),
      chain_(sampling::make_chain(s, sampling::ChainStart{std::move(history), eos_token_id, -1, /*lists=*/false},
                                  torch_row_math())),
      argmax_(sampling::picks_argmax(s)),
      records_stages_(sampling::records_stages(s)) {}

void RunChain::restart(std::vector<int64_t> history, int64_t prompt_length) {
  chain_.restart(sampling::ChainStart{std::move(history), eos_token_id_, prompt_length, /*lists=*/false});
}

RunStep RunChain::step(const torch::Tensor& logits, int64_t step_index, bool pick) {
  const torch::Tensor row = logits.contiguous();
  const int64_t vocab = row.numel();
  if (!vocabulary_checked_) {
    check_token_ids(params_.controls, vocab);
    vocabulary_checked_ = true;
  }
  const std::string where = "step " + std::to_string(step_index) + ": ";
  sampling::ChainStep chosen;
  try {
    chosen = chain_.step(row.data_ptr<float>(), static_cast<size_t>(vocab), pick);
  } catch (const sampling::NoDistribution& e) {
    throw NumericsError(where + "the distribution to draw from holds " + e.found +
                        "; the logits or the sampling parameters left float32's range (a temperature near its minimum, " +
                        "or broken weights); check the temperature and the model's weights");
  } catch (const NumericsError& e) {
    throw NumericsError(where + e.what());
  }
  RunStep out;
  out.final_probs = record_distribution(chosen.after, vocab, argmax_);
  out.argmax = argmax_;
  if (chosen.pick) out.token = chosen.pick->token;
  out.draw = draw_record(chosen.pick);
  if (records_stages_)
    for (const sampling::StageOutcome& o : chosen.stages) out.stages.push_back({o.stage, o.count});
  return out;
}

}  // namespace genrepro
