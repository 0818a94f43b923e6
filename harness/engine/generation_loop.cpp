#include "engine/generation_loop.hpp"

#include <chrono>
#include <cmath>
#include <utility>

#include "util/errors.hpp"
#include "params/sampling_params.hpp"
#include "engine/step_evidence.hpp"

namespace genrepro {

namespace {

void check_inputs(int64_t context_size, const std::vector<int64_t>& prompt_ids, const RunParams& params) {
  const auto problems = check_run_params(params);
  if (!problems.empty()) throw SpecError(describe_problem(problems.front(), problems.front().field));
  if (prompt_ids.empty())
    throw UsageError("the prompt encodes to 0 tokens; allowed: at least 1 token; give a non-empty prompt");
  if (static_cast<int64_t>(prompt_ids.size()) > context_size)
    throw UsageError("the prompt has " + std::to_string(prompt_ids.size()) + " tokens; allowed: at most the model's context (n_positions = " +
                     std::to_string(context_size) + "); shorten the prompt");
}

// Every mode stops on logits that are not all finite: greedy's argmax and the first prediction
// would otherwise record NaN probabilities that every evidence reader refuses (and argmax of NaN
// picks id 0), and a sampled run would fail later, in the distribution check, with vaguer words.
void check_logits_finite(const std::vector<float>& v, int64_t step) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isfinite(v[i])) continue;
    throw NumericsError("step " + std::to_string(step) + ": the model's logits hold " + (std::isnan(v[i]) ? "NaN" : "infinity") +
                        " (token id " + std::to_string(i) + "); the weights or the activations left float32's range; " +
                        "check model.safetensors (e.g. its sha256 in 'genrepro env') against a known-good copy");
  }
}

}  // namespace

bool is_greedy(const SamplingParams& s) { return s.mode == DecodeMode::greedy || s.temperature == 0; }

double table_temperature(const SamplingParams& s) { return s.temperature > 0 ? s.temperature : 1.0; }

GenerationRun::GenerationRun(const std::vector<int64_t>& prompt_ids, const RunParams& params, int64_t eos_token_id,
                             int64_t context_size, const StepMath& math, TokenText token_text, TokenObserver on_token)
    : params_((check_inputs(context_size, prompt_ids, params), params)),  // checked before the chain is made of them
      eos_token_id_(eos_token_id),
      context_size_(context_size),
      math_(math),
      token_text_(std::move(token_text)),
      on_token_(std::move(on_token)),
      chain_(params.sampling, prompt_ids, eos_token_id, math.chain()),
      ids_(prompt_ids),
      start_(std::chrono::steady_clock::now()) {
  result_.prompt_ids = prompt_ids;
  check_stop();
}

void GenerationRun::check_stop() {
  const int64_t new_tokens = static_cast<int64_t>(result_.output_ids.size());
  // the cap first (the user's limit), then the model's context.
  if (params_.max_new_tokens > 0 && new_tokens == params_.max_new_tokens) {
    result_.stop_reason = StopReason::max_new_tokens;
    finished_ = true;
  } else if (params_.max_new_tokens > 0 && static_cast<int64_t>(ids_.size()) >= context_size_) {
    result_.stop_reason = StopReason::context_full;  // no room to append: stop cleanly
    finished_ = true;
  }
}

void GenerationRun::advance(const std::vector<float>& logits) {
  const int64_t step = static_cast<int64_t>(result_.steps.size());
  check_logits_finite(logits, step);
  // The step's logits digest, of the model's whole row before temperature and any filter or
  // penalty sees it (the batched decoder hands each run its own row of the batch, the cache and
  // recompute paths theirs).
  std::string digest = logits_row_digest(logits);
  const bool first_prediction_only = params_.max_new_tokens == 0;  // record the first prediction, pick nothing

  // scores = chain(logits); next_id = argmax(scores) | multinomial(softmax(scores)) | llama.cpp's dist
  RunStep chosen = chain_.step(logits, step, /*pick=*/!first_prediction_only);
  const StepInputs in{logits, chosen.final_probs, chosen.argmax, table_temperature(params_.sampling), params_.top_candidates};
  StepRecord record = describe_step(in, chosen.token, token_text_, math_);
  record.step = step;
  record.stages = std::move(chosen.stages);
  record.draw = chosen.draw;  // sampled steps only
  record.logits_digest = std::move(digest);
  result_.steps.push_back(std::move(record));
  if (first_prediction_only) {
    result_.stop_reason = StopReason::max_new_tokens;
    finished_ = true;
    return;
  }

  const int64_t next_id = *chosen.token;
  ids_.push_back(next_id);  // ids = torch.cat([ids, next_id.reshape(1, 1)], dim=1)
  chain_.accept(next_id);
  result_.output_ids.push_back(next_id);
  if (on_token_) on_token_(next_id);

  if (params_.stop_at_eos && next_id == eos_token_id_) {  // if next_id.item() == eos: break
    result_.stop_reason = StopReason::eos;
    finished_ = true;
    return;
  }
  check_stop();
}

GenerationResult GenerationRun::take_result() {
  result_.stop_step = static_cast<int64_t>(result_.output_ids.size());
  result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return std::move(result_);
}

GenerationResult run_generation(LogitsSource& source, const std::vector<int64_t>& prompt_ids,
                                const RunParams& params, int64_t eos_token_id, const TokenText& token_text,
                                const TokenObserver& on_token) {
  GenerationRun run(prompt_ids, params, eos_token_id, source.context_size(), source.step_math(), token_text, on_token);
  // model -> logits -> sampler chain -> pick -> record -> stop?
  while (!run.finished()) run.advance(source.next_logits(run.ids()));
  return run.take_result();
}

}  // namespace genrepro
