#include "plan/run_plan.hpp"

#include <string>

#include "util/errors.hpp"

namespace genrepro {

namespace {

void check_against_model(const ExpandedRun& run, const std::string& file, int64_t prompt_tokens,
                         const Gpt2Config& config) {
  const std::string context = "this model's context of " + std::to_string(config.n_positions) +
                              " tokens (n_positions in config.json)";
  if (prompt_tokens > config.n_positions) {
    throw SpecError(file + ": prompts[" + std::to_string(run.prompt_index) + "] encodes to " +
                    std::to_string(prompt_tokens) + " tokens; allowed: at most " + context + "; shorten the prompt");
  }
  const int64_t room = config.n_positions - prompt_tokens;
  if (run.params.max_new_tokens > room) {
    throw SpecError(file + ": " + run.path_of("max_new_tokens") + " = " + std::to_string(run.params.max_new_tokens) +
                    " is not allowed; allowed: at most " + std::to_string(room) + " for prompts[" +
                    std::to_string(run.prompt_index) + "] (" + std::to_string(prompt_tokens) + " tokens) with " + context);
  }
  // The frameworks' token lists name ids of this model's vocabulary (issue 23).
  const FrameworkControls& c = run.params.sampling.controls;
  const auto check_token = [&](const std::string& key, int64_t id) {
    if (id >= config.vocab_size)
      throw SpecError(file + ": " + run.path_of(key) + " holds token id " + std::to_string(id) +
                      ", which is not allowed; allowed: ids from 0 to " + std::to_string(config.vocab_size - 1) +
                      " (vocab_size in config.json)");
  };
  for (int64_t id : c.suppress_tokens) check_token("suppress_tokens", id);
  for (const auto& seq : c.bad_words_ids)
    for (int64_t id : seq) check_token("bad_words_ids", id);
  for (const SequenceBias& b : c.sequence_bias)
    for (int64_t id : b.tokens) check_token("sequence_bias", id);
  for (const TokenBias& b : c.logit_bias) check_token("logit_bias", b.token);
  if (run.params.top_candidates > config.vocab_size) {
    throw SpecError(file + ": record.top_candidates = " + std::to_string(run.params.top_candidates) +
                    " is not allowed; allowed: at most the vocabulary size, " + std::to_string(config.vocab_size));
  }
}

}  // namespace

RunPlan plan_runs(const std::vector<ExperimentSpec>& experiments, const Shard& shard, const Gpt2Config& config,
                  const Gpt2Tokenizer& tokenizer) {
  RunPlan plan;
  plan.experiments = experiments;
  for (const ExperimentSpec& spec : plan.experiments) {
    std::vector<std::vector<int64_t>> encoded;
    for (const auto& prompt : spec.prompts) encoded.push_back(tokenizer.encode(prompt));
    for (const ExpandedRun& run : spec.runs) {
      const auto& ids = encoded[static_cast<size_t>(run.prompt_index)];
      check_against_model(run, spec.path, static_cast<int64_t>(ids.size()), config);
      plan.runs.push_back(run);
      plan.prompt_ids.push_back(ids);
    }
  }
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    if (shard_selects(shard, static_cast<int64_t>(i))) plan.selected.push_back(static_cast<int64_t>(i));
  }
  return plan;
}

}  // namespace genrepro
