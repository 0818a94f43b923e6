#include "sampling/presets.hpp"

#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "params/framework_params.hpp"
#include "sampling/article_rules.hpp"
#include "sampling/hf_rules.hpp"
#include "sampling/llama_cpp_stages.hpp"
#include "sampling/row_stage.hpp"

namespace genrepro::sampling {

namespace {

using Rule = RowStage::Rule;

// The article chain's stage `stage`.
Rule article_rule(SamplerStage stage, const SamplingParams& s) {
  switch (stage) {
    case SamplerStage::temperature:
      return [t = s.temperature](std::vector<float>& v, const StageContext&) { temperature_rule(v, t); };
    case SamplerStage::top_k:
      return [k = s.top_k](std::vector<float>& v, const StageContext&) { top_k_rule(v, k); };
    case SamplerStage::top_p:
      if (s.top_p_rule == TopPRule::hf)
        return [p = s.top_p](std::vector<float>& v, const StageContext& x) { top_p_hf_rule(v, p, x.math); };
      return [p = s.top_p](std::vector<float>& v, const StageContext& x) { top_p_article_rule(v, p, x.math); };
    default: break;
  }
  throw std::logic_error("not an article stage");  // a bug: check_run_params allows only these
}

// Hugging Face's processor or warper `stage` (transformers' _get_logits_processor adds them).
Rule hf_rule(SamplerStage stage, const SamplingParams& s) {
  const FrameworkControls c = s.controls;
  switch (stage) {
    case SamplerStage::sequence_bias:
      return [c](std::vector<float>& v, const StageContext& x) { hf::sequence_bias(v, x.history, c.sequence_bias); };
    case SamplerStage::repetition_penalty:
      return [c](std::vector<float>& v, const StageContext& x) { hf::repetition_penalty(v, x.history, c.repetition_penalty); };
    case SamplerStage::no_repeat_ngram_size:
      return [c](std::vector<float>& v, const StageContext& x) { hf::no_repeat_ngram(v, x.history, c.no_repeat_ngram_size); };
    case SamplerStage::bad_words_ids:
      return [c](std::vector<float>& v, const StageContext& x) { hf::bad_words(v, x.history, c.bad_words_ids, x.eos_token_id); };
    case SamplerStage::min_length:
      return [c](std::vector<float>& v, const StageContext& x) {
        hf::mask_eos_below(v, static_cast<int64_t>(x.history.size()), c.min_length, x.eos_token_id);
      };
    case SamplerStage::min_new_tokens:
      return [c](std::vector<float>& v, const StageContext& x) {
        hf::mask_eos_below(v, static_cast<int64_t>(x.history.size()) - x.prompt_length, c.min_new_tokens, x.eos_token_id);
      };
    case SamplerStage::suppress_tokens:
      return [c](std::vector<float>& v, const StageContext&) { hf::suppress_tokens(v, c.suppress_tokens); };
    case SamplerStage::temperature:
    case SamplerStage::top_k: return article_rule(stage, s);
    case SamplerStage::top_p:
      return [p = s.top_p](std::vector<float>& v, const StageContext& x) { top_p_hf_rule(v, p, x.math); };
    case SamplerStage::min_p: return [c](std::vector<float>& v, const StageContext& x) { hf::min_p(v, c.min_p, x.math); };
    case SamplerStage::typical_p:
      return [c](std::vector<float>& v, const StageContext& x) { hf::typical(v, c.typical_p, x.math); };
    case SamplerStage::epsilon_cutoff:
      return [c](std::vector<float>& v, const StageContext& x) { hf::epsilon(v, c.epsilon_cutoff, x.math); };
    case SamplerStage::eta_cutoff:
      return [c](std::vector<float>& v, const StageContext& x) { hf::eta(v, c.eta_cutoff, x.math); };
    default: break;
  }
  throw std::logic_error("not a Hugging Face stage");  // a bug: active_stages lists only these
}

std::vector<std::unique_ptr<Stage>> row_stages(const std::vector<SamplerStage>& order, const SamplingParams& s,
                                               Rule (*rule_of)(SamplerStage, const SamplingParams&)) {
  std::vector<std::unique_ptr<Stage>> stages;
  for (SamplerStage stage : order) stages.push_back(std::make_unique<RowStage>(stage, rule_of(stage, s)));
  return stages;
}

}  // namespace

bool picks_argmax(const SamplingParams& s) {
  return s.framework != Framework::llama_cpp && (s.mode == DecodeMode::greedy || s.temperature == 0);
}

std::vector<std::unique_ptr<Stage>> preset_stages(const SamplingParams& s) {
  const bool greedy = picks_argmax(s);
  switch (s.framework) {
    case Framework::article:
      if (greedy) return {};  // the article's greedy loop takes the argmax of the raw logits
      return row_stages(s.sampler_order, s, article_rule);
    case Framework::hf: return row_stages(active_stages(s, greedy), s, hf_rule);
    case Framework::llama_cpp: return llama_cpp_stages(s);
  }
  throw std::logic_error("Framework out of range");  // a bug: every enumerator is handled above
}

std::unique_ptr<Draw> preset_draw(const SamplingParams& s, const RowMath& math) { return make_draw(s, picks_argmax(s), math); }

Chain make_chain(const SamplingParams& s, ChainStart start, const RowMath& math) {
  return Chain(preset_stages(s), preset_draw(s, math), std::move(start), math);
}

bool records_stages(const SamplingParams& s) { return s.framework != Framework::article; }

std::optional<std::string> control_id_outside(const FrameworkControls& c, int64_t vocab) {
  const auto outside = [vocab](int64_t id) { return id < 0 || id >= vocab; };
  const auto says = [](const char* key, int64_t id) { return std::string(key) + " holds token id " + std::to_string(id); };
  for (int64_t id : c.suppress_tokens)
    if (outside(id)) return says("suppress_tokens", id);
  for (const auto& seq : c.bad_words_ids)
    for (int64_t id : seq)
      if (outside(id)) return says("bad_words_ids", id);
  for (const SequenceBias& b : c.sequence_bias)
    for (int64_t id : b.tokens)
      if (outside(id)) return says("sequence_bias", id);
  for (const TokenBias& b : c.logit_bias)
    if (outside(b.token)) return says("logit_bias", b.token);
  return std::nullopt;
}

}  // namespace genrepro::sampling
