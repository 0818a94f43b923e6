#include "plan/run_plan.hpp"

#include <string>

#include <nlohmann/json.hpp>

#include "params/framework_params.hpp"
#include "params/sampling_params.hpp"
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
  // The frameworks' token lists name ids of this model's vocabulary.
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

// A run's texts encoded, at the JSON paths they were written at; a problem the ids bring (a
// sequence_bias id 0, which Hugging Face refuses) is reported as check_run_params words it.
void encode_texts_of(ExpandedRun& run, const std::string& file, const Gpt2Tokenizer& tokenizer) {
  if (run.params.sampling.controls.texts.empty()) return;
  if (const auto refused = encode_control_texts(run.params, tokenizer))
    throw SpecError(file + ": " + run.path_of(refused->control) + "[" + std::to_string(refused->entry) + "] = " +
                    nlohmann::json(refused->text).dump() + " is not allowed; allowed: " + refused->allowed);
  for (const ParamProblem& problem : check_run_params(run.params))
    throw SpecError(file + ": " + describe_problem(problem, run.path_of(problem.field)));
}

}  // namespace

std::optional<ControlTextRefusal> encode_control_texts(RunParams& p, const Gpt2Tokenizer& tokenizer) {
  FrameworkControls& c = p.sampling.controls;
  const ControlTextRule rule = control_text_rule(p.sampling.framework);
  EncodeOptions options;
  options.special_tokens = rule.special_tokens;
  options.prefix_space = rule.prefix_space;
  std::vector<std::vector<int64_t>> ids;
  for (const ControlText& t : c.texts) {
    ids.push_back(tokenizer.encode(t.text, options));
    const std::vector<int64_t>& got = ids.back();
    if (got.empty())
      return ControlTextRefusal{t.control, t.entry, t.text,
                                std::string("a text that encodes to at least one token by ") + rule.name + "; this one encodes to none"};
    if (t.control == "suppress_tokens" && got.size() != 1)
      return ControlTextRefusal{t.control, t.entry, t.text,
                                std::string("a text of exactly one token (suppress_tokens takes single tokens); ") + rule.name +
                                    " encodes this one to " + std::to_string(got.size()) + " tokens, " + nlohmann::json(got).dump() +
                                    ": give one text per token, or the ids"};
  }
  place_control_text_ids(c, ids);
  return std::nullopt;
}

RunPlan plan_runs(const std::vector<ExperimentSpec>& experiments, const Shard& shard, const Gpt2Config& config,
                  const Gpt2Tokenizer& tokenizer) {
  RunPlan plan;
  plan.experiments = experiments;
  for (ExperimentSpec& spec : plan.experiments) {
    std::vector<std::vector<int64_t>> encoded;
    for (const auto& prompt : spec.prompts) encoded.push_back(tokenizer.encode(prompt));
    for (ExpandedRun& run : spec.runs) {
      encode_texts_of(run, spec.path, tokenizer);
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
