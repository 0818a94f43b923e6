#include "engine/run_chain.hpp"

#include <string>
#include <utility>

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

// The distribution the record reads, over the vocabulary in id order.
std::vector<float> record_distribution(const sampling::Candidates& after, size_t vocab, bool argmax,
                                       const sampling::RowMath& math) {
  if (argmax) {
    // greedy: softmax of the scores at T = 1 (the argmax was taken on them). The candidates of an
    // argmax preset are the whole vocabulary in id order.
    std::vector<float> scores(after.size);
    for (size_t i = 0; i < after.size; ++i) scores[i] = after.data[i].logit;
    return math.softmax(scores);
  }
  // Each candidate's p at its id (llama.cpp's stages shrink and reorder the array).
  std::vector<float> probs(vocab, 0.0f);
  for (size_t i = 0; i < after.size; ++i) probs[static_cast<size_t>(after.data[i].id)] = after.data[i].p;
  return probs;
}

}  // namespace

RunChain::RunChain(const SamplingParams& s, std::vector<int64_t> history, int64_t eos_token_id,
                   const sampling::RowMath& math)
    : params_(s),
      eos_token_id_(eos_token_id),
      math_(math),
      chain_(sampling::make_chain(s, sampling::ChainStart{std::move(history), eos_token_id, -1, /*lists=*/false},
                                  math)),
      argmax_(sampling::picks_argmax(s)),
      records_stages_(sampling::records_stages(s)) {}

void RunChain::restart(std::vector<int64_t> history, int64_t prompt_length) {
  chain_.restart(sampling::ChainStart{std::move(history), eos_token_id_, prompt_length, /*lists=*/false});
}

RunStep RunChain::step(const std::vector<float>& logits, int64_t step_index, bool pick) {
  const int64_t vocab = static_cast<int64_t>(logits.size());
  if (!vocabulary_checked_) {
    check_token_ids(params_.controls, vocab);
    vocabulary_checked_ = true;
  }
  const std::string where = "step " + std::to_string(step_index) + ": ";
  sampling::ChainStep chosen;
  try {
    chosen = chain_.step(logits.data(), logits.size(), pick);
  } catch (const sampling::NoDistribution& e) {
    throw NumericsError(where + "the distribution to draw from holds " + e.found +
                        "; the logits or the sampling parameters left float32's range (a temperature near its minimum, " +
                        "or broken weights); check the temperature and the model's weights");
  } catch (const NumericsError& e) {
    throw NumericsError(where + e.what());
  }
  RunStep out;
  out.final_probs = record_distribution(chosen.after, logits.size(), argmax_, math_);
  out.argmax = argmax_;
  if (chosen.pick) out.token = chosen.pick->token;
  out.draw = draw_record(chosen.pick);
  if (records_stages_)
    for (const sampling::StageOutcome& o : chosen.stages) out.stages.push_back({o.stage, o.count});
  return out;
}

}  // namespace genrepro
