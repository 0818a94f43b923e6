#include "engine/generation_loop.hpp"

#include <chrono>
#include <cmath>
#include <utility>

#include "util/errors.hpp"
#include "params/sampling_params.hpp"
#include "engine/samplers.hpp"
#include "engine/step_evidence.hpp"
#include "engine/token_picker.hpp"

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
void check_logits_finite(const torch::Tensor& logits, int64_t step) {
  const torch::Tensor c = logits.contiguous();
  const float* v = c.data_ptr<float>();
  for (int64_t i = 0, n = c.numel(); i < n; ++i) {
    if (std::isfinite(v[i])) continue;
    throw NumericsError("step " + std::to_string(step) + ": the model's logits hold " + (std::isnan(v[i]) ? "NaN" : "infinity") +
                        " (token id " + std::to_string(i) + "); the weights or the activations left float32's range; " +
                        "check model.safetensors (e.g. its sha256 in 'genrepro env') against a known-good copy");
  }
}

}  // namespace

bool is_greedy(const SamplingParams& s) { return s.mode == DecodeMode::greedy || s.temperature == 0; }

double table_temperature(const SamplingParams& s) { return s.temperature > 0 ? s.temperature : 1.0; }

torch::Tensor final_distribution(const torch::Tensor& logits, bool greedy, const SamplerChain& chain) {
  // greedy: softmax at T = 1; sample: probs = torch.softmax(chain(logits), dim=0)
  return greedy ? torch::softmax(logits, 0) : torch::softmax(chain.apply(logits), 0);
}

GenerationRun::GenerationRun(const std::vector<int64_t>& prompt_ids, const RunParams& params, int64_t eos_token_id,
                             int64_t context_size, TokenText token_text, TokenObserver on_token)
    : params_(params),
      eos_token_id_(eos_token_id),
      context_size_(context_size),
      token_text_(std::move(token_text)),
      on_token_(std::move(on_token)),
      greedy_(is_greedy(params.sampling)),
      chain_(params.sampling.framework == Framework::article ? build_sampler_chain(params.sampling)
                                                              : SamplerChain({})),
      ids_(prompt_ids),
      start_(std::chrono::steady_clock::now()) {
  check_inputs(context_size, prompt_ids, params);
  if (params.sampling.framework == Framework::article)
    picker_ = make_token_picker(params.sampling);
  else
    framework_ = make_framework_sampler(params.sampling);
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

void GenerationRun::advance(const torch::Tensor& model_logits) {
  const torch::Tensor logits = model_logits.to(torch::kFloat32);
  check_logits_finite(logits, static_cast<int64_t>(result_.steps.size()));
  // The step's logits digest, of the model's whole row before temperature and any filter or
  // penalty sees it (the batched decoder hands each run its own row of the batch, the cache and
  // recompute paths theirs).
  std::string digest = logits_row_digest(logits);
  if (framework_) return advance_framework(logits, std::move(digest));
  const torch::Tensor probs = final_distribution(logits, greedy_, chain_);
  const StepInputs in{logits, probs, greedy_, table_temperature(params_.sampling), params_.top_candidates};

  if (params_.max_new_tokens == 0) {  // record the first prediction, pick nothing
    StepRecord record = describe_step(in, std::nullopt, token_text_);
    record.logits_digest = std::move(digest);
    result_.steps.push_back(std::move(record));
    result_.stop_reason = StopReason::max_new_tokens;
    finished_ = true;
    return;
  }

  // next_id = argmax(logits) | torch.multinomial(probs, num_samples=1, generator=rng)
  const RacePick drawn = greedy_ ? RacePick{pick_greedy(logits), std::nullopt} : picker_->pick_with_margin(probs);
  const int64_t next_id = drawn.token;
  StepRecord record = describe_step(in, next_id, token_text_);
  record.step = static_cast<int64_t>(result_.steps.size());
  record.draw = race_draw_record(drawn);  // sampled steps only
  record.logits_digest = std::move(digest);
  result_.steps.push_back(std::move(record));
  ids_.push_back(next_id);  // ids = torch.cat([ids, next_id.reshape(1, 1)], dim=1)
  result_.output_ids.push_back(next_id);
  if (on_token_) on_token_(next_id);

  if (params_.stop_at_eos && next_id == eos_token_id_) {  // if next_id.item() == eos: break
    result_.stop_reason = StopReason::eos;
    finished_ = true;
    return;
  }
  check_stop();
}

// The same loop with a framework's chain: it reads the history and picks (llama.cpp's dist is a
// stage of its chain), and the step lists every stage with its kept-set count.
void GenerationRun::advance_framework(const torch::Tensor& logits, std::string digest) {
  const bool first_prediction_only = params_.max_new_tokens == 0;
  const ChainHistory history{ids_, static_cast<int64_t>(result_.prompt_ids.size()), eos_token_id_};
  FrameworkStep chosen = framework_->step(logits, history, /*pick=*/!first_prediction_only);
  // kept: Hugging Face's greedy picks the argmax of the processed scores (kept 1, as the article's
  // greedy); llama.cpp always draws, and its T <= 0 rule leaves one candidate by itself.
  const bool argmax = greedy_ && params_.sampling.framework == Framework::hf;
  const StepInputs in{logits, chosen.final_probs, argmax, table_temperature(params_.sampling), params_.top_candidates};
  StepRecord record = describe_step(in, chosen.token, token_text_);
  record.stages = std::move(chosen.stages);
  record.draw = chosen.draw;
  record.step = static_cast<int64_t>(result_.steps.size());
  record.logits_digest = std::move(digest);
  result_.steps.push_back(std::move(record));
  if (first_prediction_only) {
    result_.stop_reason = StopReason::max_new_tokens;
    finished_ = true;
    return;
  }
  const int64_t next_id = *chosen.token;
  ids_.push_back(next_id);
  result_.output_ids.push_back(next_id);
  if (on_token_) on_token_(next_id);
  if (params_.stop_at_eos && next_id == eos_token_id_) {
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
  GenerationRun run(prompt_ids, params, eos_token_id, source.context_size(), token_text, on_token);
  // model -> logits -> sampler chain -> pick -> record -> stop?
  while (!run.finished()) run.advance(source.next_logits(run.ids()));
  return run.take_result();
}

}  // namespace genrepro
