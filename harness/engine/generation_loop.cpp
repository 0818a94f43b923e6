#include "engine/generation_loop.hpp"

#include <chrono>

#include "util/errors.hpp"
#include "spec/sampling_params.hpp"
#include "engine/samplers.hpp"
#include "engine/step_evidence.hpp"
#include "engine/token_picker.hpp"

namespace genrepro {

namespace {

void check_inputs(const LogitsSource& source, const std::vector<int64_t>& prompt_ids, const RunParams& params) {
  const auto problems = check_run_params(params);
  if (!problems.empty()) throw SpecError(describe_problem(problems.front(), problems.front().field));
  if (prompt_ids.empty())
    throw UsageError("the prompt encodes to 0 tokens; allowed: at least 1 token; give a non-empty prompt");
  if (static_cast<int64_t>(prompt_ids.size()) > source.context_size())
    throw UsageError("the prompt has " + std::to_string(prompt_ids.size()) + " tokens; allowed: at most the model's context (n_positions = " +
                     std::to_string(source.context_size()) + "); shorten the prompt");
}

}  // namespace

bool is_greedy(const SamplingParams& s) { return s.mode == DecodeMode::greedy || s.temperature == 0; }

double table_temperature(const SamplingParams& s) { return s.temperature > 0 ? s.temperature : 1.0; }

torch::Tensor final_distribution(const torch::Tensor& logits, bool greedy, const SamplerChain& chain) {
  // greedy: softmax at T = 1; sample: probs = torch.softmax(chain(logits), dim=0)
  return greedy ? torch::softmax(logits, 0) : torch::softmax(chain.apply(logits), 0);
}

GenerationResult run_generation(LogitsSource& source, const std::vector<int64_t>& prompt_ids,
                                const RunParams& params, int64_t eos_token_id, const TokenText& token_text) {
  check_inputs(source, prompt_ids, params);
  const auto start = std::chrono::steady_clock::now();
  const SamplingParams& s = params.sampling;
  const bool greedy = is_greedy(s);
  const SamplerChain chain = build_sampler_chain(s);
  const auto picker = make_token_picker(s);  // seeded once per run, like the article's rng

  GenerationResult result;
  result.prompt_ids = prompt_ids;
  std::vector<int64_t> ids = prompt_ids;
  const auto new_tokens = [&] { return static_cast<int64_t>(result.output_ids.size()); };

  for (int64_t step = 0;; ++step) {
    // stop? the cap first (the user's limit), then the model's context.
    if (params.max_new_tokens > 0 && new_tokens() == params.max_new_tokens) {
      result.stop_reason = StopReason::max_new_tokens;
      break;
    }
    if (params.max_new_tokens > 0 && static_cast<int64_t>(ids.size()) >= source.context_size()) {
      result.stop_reason = StopReason::context_full;  // no room to append: stop cleanly
      break;
    }

    // logits = lm(ids, use_cache=False).logits[0, -1]
    const torch::Tensor logits = source.next_logits(ids).to(torch::kFloat32);
    const torch::Tensor probs = final_distribution(logits, greedy, chain);
    const StepInputs in{logits, probs, greedy, table_temperature(s), params.top_candidates};

    if (params.max_new_tokens == 0) {  // record the first prediction, pick nothing
      result.steps.push_back(describe_step(in, std::nullopt, token_text));
      result.stop_reason = StopReason::max_new_tokens;
      break;
    }

    // next_id = argmax(logits) | torch.multinomial(probs, num_samples=1, generator=rng)
    const int64_t next_id = greedy ? pick_greedy(logits) : picker->pick(probs);
    StepRecord record = describe_step(in, next_id, token_text);
    record.step = step;
    result.steps.push_back(std::move(record));
    ids.push_back(next_id);  // ids = torch.cat([ids, next_id.reshape(1, 1)], dim=1)
    result.output_ids.push_back(next_id);

    if (params.stop_at_eos && next_id == eos_token_id) {  // if next_id.item() == eos: break
      result.stop_reason = StopReason::eos;
      break;
    }
  }
  result.stop_step = new_tokens();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace genrepro
