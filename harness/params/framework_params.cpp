#include "params/framework_params.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "params/number_text.hpp"
#include "util/errors.hpp"
#include "util/joined.hpp"

namespace genrepro {

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr double kInf = std::numeric_limits<double>::infinity();
// llama_sampler_init_dist(uint32_t seed): LLAMA_DEFAULT_SEED (0xFFFFFFFF) asks for a random seed.
constexpr uint64_t kLlamaDefaultSeed = 0xFFFFFFFFu;

const std::vector<SamplerStage> kArticleOrder = {SamplerStage::temperature, SamplerStage::top_k, SamplerStage::top_p};
const std::vector<SamplerStage> kHfOrder = {
    SamplerStage::sequence_bias, SamplerStage::repetition_penalty, SamplerStage::no_repeat_ngram_size,
    SamplerStage::bad_words_ids, SamplerStage::min_length,         SamplerStage::min_new_tokens,
    SamplerStage::suppress_tokens, SamplerStage::temperature,      SamplerStage::top_k,
    SamplerStage::top_p,         SamplerStage::min_p,              SamplerStage::typical_p,
    SamplerStage::epsilon_cutoff, SamplerStage::eta_cutoff};
const std::vector<SamplerStage> kLlamaCppOrder = {
    SamplerStage::logit_bias, SamplerStage::penalties, SamplerStage::top_n_sigma, SamplerStage::top_k, SamplerStage::typical_p,
    SamplerStage::top_p,      SamplerStage::min_p,     SamplerStage::temperature, SamplerStage::dist};

bool is_integer(const json& v) {
  return v.is_number_integer() &&
         !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()));
}

// A token id as written: a non-negative integer (the vocabulary bound is checked against the model).
bool read_token(const json& v, int64_t& out) {
  if (!is_integer(v) || v.get<int64_t>() < 0) return false;
  out = v.get<int64_t>();
  return true;
}

bool read_tokens(const json& v, std::vector<int64_t>& out) {
  if (!v.is_array()) return false;
  out.clear();
  for (const json& t : v) {
    int64_t id = 0;
    if (!read_token(t, id)) return false;
    out.push_back(id);
  }
  return true;
}

// A bias: a number, or -infinity written as false (llama.cpp server's "never") or "-Infinity".
bool read_bias(const json& v, double& out, bool minus_infinity_allowed) {
  if (v.is_number()) {
    out = v.get<double>();
    return true;
  }
  if (minus_infinity_allowed && ((v.is_boolean() && !v.get<bool>()) || v == "-Infinity")) {
    out = -kInf;
    return true;
  }
  return false;
}

ordered_json real_json(double v) {
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

bool finite(double v) { return std::isfinite(v); }

// The controls act on float32 logits. A value finite as a double can be infinite as a float32
// (a bias of 1e300), and a factor can carry a logit past float32's range (a penalty of 1e-38
// divides it by 1e-38): either writes NaN probabilities, or stops a sampled run blaming the
// temperature. The bounds are a temperature's (docs/validation.md, "Float32 edges").
constexpr double kControlMagnitude = 1e30;
constexpr double kSmallestFactor = 1e-30;
constexpr const char* kBiasMagnitude =
    "each bias from -1e+30 to 1e+30 (the logits are float32: a larger bias is infinite there, and the probabilities NaN)";

// The float32 bound a control's value passes its row's range but not, in the words of the message.
std::optional<std::string> float32_edge(const FrameworkControls& c, const std::string& key) {
  const auto factor = [](double v) { return v >= kSmallestFactor && v <= kControlMagnitude; };
  const auto magnitude = [](double v) { return std::fabs(v) <= kControlMagnitude; };
  if (key == "repetition_penalty" && !factor(c.repetition_penalty))
    return std::string("a number from 1e-30 to 1e+30 (1 turns it off; the logits are float32, and a penalty past these carries them "
                       "out of its range)");
  if (key == "repeat_penalty" && !factor(c.repeat_penalty))
    return std::string("a number from 1e-30 to 1e+30 (1 turns it off; the logits are float32, and a penalty past these carries them "
                       "out of its range)");
  const std::pair<const char*, double> magnitudes[] = {{"frequency_penalty", c.frequency_penalty},
                                                       {"presence_penalty", c.presence_penalty},
                                                       {"top_n_sigma", c.top_n_sigma},
                                                       {"dynatemp_range", c.dynatemp_range},
                                                       {"dynatemp_exponent", c.dynatemp_exponent}};
  for (const auto& [name, v] : magnitudes)
    if (key == name && !magnitude(v))
      return std::string("a number from -1e+30 to 1e+30 (the logits are float32: a larger value is infinite there)");
  return std::nullopt;
}

bool is_list_control(const std::string& key) {
  const ParamRow* k = find_control_key(key);
  return k && k->list_valued();
}

// A control's place in control_keys(): the order c.texts and evidence keep.
size_t control_rank(const std::string& key) {
  const auto& keys = control_keys();
  for (size_t i = 0; i < keys.size(); ++i)
    if (key == keys[i]->key) return i;
  return keys.size();
}

size_t list_size(const FrameworkControls& c, const std::string& key) {
  if (key == "suppress_tokens") return c.suppress_tokens.size();
  if (key == "bad_words_ids") return c.bad_words_ids.size();
  if (key == "sequence_bias") return c.sequence_bias.size();
  if (key == "logit_bias") return c.logit_bias.size();
  return 0;
}

// One entry of a list control as ids.
ordered_json entry_json(const FrameworkControls& c, const std::string& key, size_t i) {
  if (key == "suppress_tokens") return c.suppress_tokens[i];
  if (key == "bad_words_ids") return c.bad_words_ids[i];
  if (key == "sequence_bias") return ordered_json::array({c.sequence_bias[i].tokens, real_json(c.sequence_bias[i].bias)});
  return ordered_json::array({c.logit_bias[i].token, real_json(c.logit_bias[i].bias)});
}

// A text in its entry's place: the string, or [string, bias] for the controls with a bias.
ordered_json text_json(const FrameworkControls& c, const ControlText& t) {
  const auto i = static_cast<size_t>(t.entry);
  if (t.control == "sequence_bias") return ordered_json::array({t.text, real_json(c.sequence_bias[i].bias)});
  if (t.control == "logit_bias") return ordered_json::array({t.text, real_json(c.logit_bias[i].bias)});
  return t.text;
}

// How many entries of its list a text stands for: one, or for an encoded logit_bias text one per token.
size_t span_of(const ControlText& t) { return t.control == "logit_bias" && !t.ids.empty() ? t.ids.size() : 1; }

// A list control, entry by entry: ids, with a text wherever one was given and (unless
// `as_written`) not yet encoded. Assumes c.texts is coherent (control_texts_problem).
ordered_json list_json(const FrameworkControls& c, const std::string& key, bool as_written) {
  std::vector<const ControlText*> texts;
  for (const ControlText& t : c.texts)
    if (t.control == key) texts.push_back(&t);
  ordered_json out = ordered_json::array();
  const size_t n = list_size(c, key);
  size_t next = 0;
  for (size_t i = 0; i < n;) {
    if (next < texts.size() && static_cast<size_t>(texts[next]->entry) == i) {
      const ControlText& t = *texts[next++];
      if (as_written || t.ids.empty()) {
        out.push_back(text_json(c, t));
        i += span_of(t);
        continue;
      }
    }
    out.push_back(entry_json(c, key, i));
    ++i;
  }
  return out;
}

bool unencoded_text_at(const FrameworkControls& c, const std::string& key, size_t i) {
  return std::any_of(c.texts.begin(), c.texts.end(),
                     [&](const ControlText& t) { return t.control == key && static_cast<size_t>(t.entry) == i && t.ids.empty(); });
}

}  // namespace

const std::vector<std::string>& framework_names() {
  static const std::vector<std::string> names = {"article", "hf", "llama.cpp"};
  return names;
}

Checked<Framework> check_framework(const std::string& name) {
  if (const auto f = parse_framework(name)) return {f, std::nullopt};
  return {std::nullopt, ParamProblem{"framework", name, "one of {" + joined(framework_names(), ", ") + "}"}};
}

const std::vector<SamplerStage>& framework_order(Framework f) {
  switch (f) {
    case Framework::article: return kArticleOrder;
    case Framework::hf: return kHfOrder;
    case Framework::llama_cpp: return kLlamaCppOrder;
  }
  return kArticleOrder;
}

const std::vector<std::string>& llama_cpp_orderable_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (size_t i = 1; i + 1 < kLlamaCppOrder.size(); ++i) n.push_back(to_string(kLlamaCppOrder[i]));
    return n;
  }();
  return names;
}

void resolve_framework(SamplingParams& s, Framework f) {
  SamplingParams r;  // the article's values
  r.mode = s.mode;
  r.seed = s.seed;
  r.framework = f;
  switch (f) {
    case Framework::article: break;
    case Framework::hf:
      // transformers GenerationConfig: temperature 1.0, top_k 50, top_p 1.0, min_p None,
      // typical_p 1.0, epsilon_cutoff 0.0, eta_cutoff 0.0, repetition_penalty 1.0,
      // no_repeat_ngram_size 0, bad_words_ids / sequence_bias / suppress_tokens None,
      // min_length 0, min_new_tokens None. GPT-2's generation_config.json sets none of them.
      r.temperature = 1.0;
      r.top_k = 50;
      r.top_p = 1.0;
      r.top_p_rule = TopPRule::hf;
      r.rng = Rng::torch;
      break;
    case Framework::llama_cpp:
      // common/common.h common_params_sampling: temp 0.80f, top_k 40, top_p 0.95f, min_p 0.05f,
      // typ_p 1.00f, top_n_sigma -1.00f, dynatemp_range 0.00f, dynatemp_exponent 1.00f,
      // penalty_last_n 64, penalty_repeat 1.00f, penalty_freq 0.00f, penalty_present 0.00f,
      // min_keep 0. Greedy in llama.cpp is --temp 0 (the temperature sampler's <= 0 rule).
      r.temperature = s.mode == DecodeMode::greedy ? 0.0 : 0.8;
      r.top_k = 40;
      r.top_p = 0.95;
      r.controls.min_p = 0.05;
      r.top_p_rule = TopPRule::llama_cpp;
      r.rng = Rng::llama_cpp;
      break;
  }
  r.sampler_order = framework_order(f);
  s = std::move(r);
}

const std::vector<const ParamRow*>& control_keys() { return control_rows(); }

const ParamRow* find_control_key(const std::string& key) {
  const ParamRow* row = find_param(key);
  return row && row->is_control() ? row : nullptr;
}

bool framework_has(Framework f, const ParamRow& k) { return f != Framework::article && k.has(f); }

std::string owners_of(const ParamRow& k) {
  if (k.has(Framework::hf) && k.has(Framework::llama_cpp)) return "Hugging Face's and llama.cpp's";
  return k.has(Framework::hf) ? "Hugging Face's" : "llama.cpp's";
}

std::string frameworks_of(const ParamRow& k) {
  if (k.has(Framework::hf) && k.has(Framework::llama_cpp)) return "hf or llama.cpp";
  return k.has(Framework::hf) ? "hf" : "llama.cpp";
}

std::string control_allowed(const std::string& key) {
  const ParamRow* row = find_control_key(key);
  return row ? row->allowed() : "?";
}

std::optional<ControlProblem> read_control(FrameworkControls& c, const std::string& key, const json& v) {
  const std::string allowed = control_allowed(key);
  const std::optional<ControlProblem> whole = ControlProblem{allowed, "", v, std::nullopt};
  const ParamRow* k = find_control_key(key);
  if (!k) return ControlProblem{"a known control", "", v, std::nullopt};
  if (!k->list_valued()) {
    // A scalar control: the table's reader, on a copy that holds these controls.
    RunParams p;
    p.sampling.controls = std::move(c);
    std::optional<ControlProblem> problem = k->read(p, v);
    c = std::move(p.sampling.controls);
    if (problem && problem->allowed.empty()) problem->allowed = allowed;
    return problem;
  }

  if (!v.is_array()) return whole;
  // The list's texts, kept beside it; an empty string is refused where it stands.
  std::vector<ControlText> texts;
  std::optional<ControlProblem> bad_text;
  const auto text_at = [&](size_t i, const json& t) -> bool {
    if (!t.is_string()) return false;
    if (t.get<std::string>().empty()) {
      if (!bad_text)
        bad_text = ControlProblem{"a non-empty text (the tokenizer encodes it by the framework's rule) or " +
                                      std::string(key == "suppress_tokens" || key == "logit_bias" ? "a token id" : "a list of token ids"),
                                  "[" + std::to_string(i) + "]" + (key == "sequence_bias" || key == "logit_bias" ? "[0]" : ""), t, std::nullopt};
      return true;
    }
    texts.push_back({key, static_cast<int64_t>(i), t.get<std::string>(), {}});
    return true;
  };
  if (key == "suppress_tokens") {
    std::vector<int64_t> all;
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t id = -1;  // a text's placeholder until it is encoded
      if (!text_at(i, v[i]) && !read_token(v[i], id)) return whole;
      all.push_back(id);
    }
    if (bad_text) return bad_text;
    c.suppress_tokens = std::move(all);
  } else if (key == "bad_words_ids") {
    std::vector<std::vector<int64_t>> all;
    for (size_t i = 0; i < v.size(); ++i) {
      std::vector<int64_t> ids;
      if (!text_at(i, v[i]) && (!read_tokens(v[i], ids) || ids.empty())) return whole;
      all.push_back(std::move(ids));
    }
    if (bad_text) return bad_text;
    c.bad_words_ids = std::move(all);
  } else if (key == "sequence_bias") {
    std::vector<SequenceBias> all;
    for (size_t i = 0; i < v.size(); ++i) {
      const json& pair = v[i];
      if (!pair.is_array() || pair.size() != 2) return whole;
      SequenceBias b;
      if (!text_at(i, pair[0]) && (!read_tokens(pair[0], b.tokens) || b.tokens.empty())) return whole;
      if (!read_bias(pair[1], b.bias, false)) return whole;
      all.push_back(std::move(b));
    }
    if (bad_text) return bad_text;
    c.sequence_bias = std::move(all);
  } else if (key == "logit_bias") {
    std::vector<TokenBias> all;
    for (size_t i = 0; i < v.size(); ++i) {
      const json& pair = v[i];
      if (!pair.is_array() || pair.size() != 2) return whole;
      TokenBias b;
      b.token = -1;
      if (!text_at(i, pair[0]) && !read_token(pair[0], b.token)) return whole;
      if (!read_bias(pair[1], b.bias, true)) return whole;
      all.push_back(b);
    }
    if (bad_text) return bad_text;
    c.logit_bias = std::move(all);
  } else {
    return ControlProblem{"a known control", "", v, std::nullopt};
  }
  // This control's texts replace the ones it had; the list stays in control_keys() order.
  std::vector<ControlText> kept;
  for (ControlText& t : c.texts)
    if (t.control != key) kept.push_back(std::move(t));
  for (ControlText& t : texts) kept.push_back(std::move(t));
  std::stable_sort(kept.begin(), kept.end(), [](const ControlText& a, const ControlText& b) {
    return control_rank(a.control) < control_rank(b.control);
  });
  c.texts = std::move(kept);
  return std::nullopt;
}

ordered_json control_to_json(const FrameworkControls& c, const std::string& key) {
  if (is_list_control(key)) return list_json(c, key, false);
  const ParamRow* row = find_control_key(key);
  if (!row) return nullptr;
  RunParams p;
  p.sampling.controls = c;
  return row->get(p);
}

std::vector<ParamProblem> check_framework_params(const RunParams& p) {
  std::vector<ParamProblem> problems;
  const SamplingParams& s = p.sampling;
  const FrameworkControls& c = s.controls;
  const auto add = [&](const std::string& field, const std::string& value, const std::string& allowed) {
    problems.push_back({field, value, allowed});
  };
  const auto value_of = [&](const std::string& key) { return short_value(control_to_json(c, key).dump()); };
  const std::string frameworks = "one of {" + joined(framework_names(), ", ") + "}";

  // A control of another framework (or of none, for article) must stay off: it would be ignored.
  const RunParams off_params;
  for (const ParamRow* k : control_keys()) {
    const ordered_json value = k->get(p), off_value = k->get(off_params);
    if (framework_has(s.framework, *k) || value == off_value) continue;
    add(k->key, value.dump(),
        "its off value " + off_value.dump() + " unless framework " + frameworks_of(*k) + " (" + k->key + " is " +
            owners_of(*k) + " control; this run's framework is " + to_string(s.framework) + ")");
  }
  if (s.framework == Framework::article) {
    if (s.top_p_rule == TopPRule::llama_cpp) add("top_p_rule", "llama.cpp", "one of {article, hf} (llama.cpp's rule is framework llama.cpp's)");
    if (s.rng == Rng::llama_cpp) add("rng", "llama.cpp", "one of {torch, portable} (llama.cpp's dist is framework llama.cpp's)");
    return problems;
  }

  // Ranges: only the owning framework's controls (the others are off, checked above), each by
  // its row; the two bias lists by their entries.
  for (const ParamRow* k : control_keys()) {
    if (!framework_has(s.framework, *k)) continue;
    const std::string key = k->key;
    if (key == "sequence_bias") {
      for (size_t i = 0; i < c.sequence_bias.size(); ++i) {
        const SequenceBias& b = c.sequence_bias[i];
        if (unencoded_text_at(c, "sequence_bias", i)) continue;  // checked once encoded (plan_runs, generate)
        const bool ids_positive = std::all_of(b.tokens.begin(), b.tokens.end(), [](int64_t t) { return t > 0; });
        if (!ids_positive || !finite(b.bias) || b.tokens.empty()) {
          add(key, value_of(key), k->allowed() + " (Hugging Face refuses token id 0 in this list form)");
          break;
        }
        if (std::fabs(b.bias) > kControlMagnitude) {
          add(key, value_of(key), kBiasMagnitude);
          break;
        }
      }
    } else if (key == "logit_bias") {
      for (const TokenBias& b : c.logit_bias) {
        if (std::isnan(b.bias) || b.bias == kInf) {
          add(key, value_of(key), k->allowed());
          break;
        }
        if (b.bias != -kInf && std::fabs(b.bias) > kControlMagnitude) {
          add(key, value_of(key), std::string(kBiasMagnitude) + ", or false / \"-Infinity\" (never)");
          break;
        }
      }
    } else if (k->in_range && !k->in_range(p)) {
      const ordered_json v = k->get(p);
      add(key, v.is_number_float() ? number_text(v.get<double>()) : v.dump(), k->allowed());
    } else if (const std::optional<std::string> edge = float32_edge(c, key)) {
      add(key, number_text(k->get(p).get<double>()), *edge);
    }
  }
  if (s.framework == Framework::hf) {
    if (s.top_p_rule != TopPRule::hf)
      add("top_p_rule", to_string(s.top_p_rule), "hf (framework hf applies Hugging Face's TopPLogitsWarper)");
    if (s.rng == Rng::llama_cpp) add("rng", "llama.cpp", "one of {torch, portable} (framework hf draws with torch.multinomial)");
    if (s.sampler_order != kHfOrder)
      add("sampler_order", joined(stage_names(s.sampler_order), ","),
          "Hugging Face's fixed order " + joined(stage_names(kHfOrder), ",") + " (generate() cannot reorder its processors)");
  } else {
    if (s.top_k > std::numeric_limits<int32_t>::max())
      add("top_k", std::to_string(s.top_k), "an integer from 0 to 2147483647 (llama.cpp's top_k is an int32_t; 0 turns it off)");
    if (s.mode == DecodeMode::sample && s.seed >= kLlamaDefaultSeed)
      add("seed", std::to_string(s.seed),
          "an integer from 0 to 4294967294 (llama_sampler_init_dist takes a uint32, and 4294967295 is LLAMA_DEFAULT_SEED: a random seed)");
    if (s.top_p_rule != TopPRule::llama_cpp)
      add("top_p_rule", to_string(s.top_p_rule), "llama.cpp (framework llama.cpp applies llama.cpp's top-p sampler)");
    if (s.rng != Rng::llama_cpp) add("rng", to_string(s.rng), "llama.cpp (framework llama.cpp draws with llama.cpp's dist sampler)");
    // logit_bias first, dist last, the seven between in any order (llama.cpp's --samplers).
    std::vector<SamplerStage> middle(s.sampler_order.begin(), s.sampler_order.end());
    bool ok = middle.size() == kLlamaCppOrder.size() && middle.front() == SamplerStage::logit_bias &&
              middle.back() == SamplerStage::dist;
    if (ok) {
      std::vector<SamplerStage> a(middle.begin() + 1, middle.end() - 1), b(kLlamaCppOrder.begin() + 1, kLlamaCppOrder.end() - 1);
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      ok = a == b;
    }
    if (!ok)
      add("sampler_order", joined(stage_names(s.sampler_order), ","),
          "the seven stages {" + joined(llama_cpp_orderable_names(), ", ") +
              "} in any order, each once (logit_bias always runs first and dist last)");
  }
  return problems;
}

std::vector<SamplerStage> active_stages(const SamplingParams& s, bool greedy) {
  const FrameworkControls& c = s.controls;
  std::vector<SamplerStage> out;
  if (s.framework == Framework::article) return out;
  const bool hf = s.framework == Framework::hf;
  for (SamplerStage stage : s.sampler_order) {
    bool on = false;
    switch (stage) {
      // Hugging Face: the conditions under which _get_logits_processor adds each processor.
      case SamplerStage::sequence_bias: on = !c.sequence_bias.empty(); break;
      case SamplerStage::repetition_penalty: on = c.repetition_penalty != 1.0; break;
      case SamplerStage::no_repeat_ngram_size: on = c.no_repeat_ngram_size > 0; break;
      case SamplerStage::bad_words_ids: on = !c.bad_words_ids.empty(); break;
      case SamplerStage::min_length: on = c.min_length > 0; break;
      case SamplerStage::min_new_tokens: on = c.min_new_tokens > 0; break;
      case SamplerStage::suppress_tokens: on = !c.suppress_tokens.empty(); break;
      case SamplerStage::epsilon_cutoff: on = !greedy && c.epsilon_cutoff > 0 && c.epsilon_cutoff < 1; break;
      case SamplerStage::eta_cutoff: on = !greedy && c.eta_cutoff > 0 && c.eta_cutoff < 1; break;
      // Shared names: Hugging Face adds a warper only when sampling; llama.cpp's no-op conditions.
      case SamplerStage::temperature: on = hf ? !greedy && s.temperature != 1.0 : true; break;
      case SamplerStage::top_k: on = hf ? !greedy && s.top_k != 0 : s.top_k > 0; break;
      // (llama.cpp compares its float copies: `p >= 1.0f` returns, `p <= 0.0f` returns.)
      case SamplerStage::top_p: on = hf ? !greedy && s.top_p < 1.0 : static_cast<float>(s.top_p) < 1.0f; break;
      case SamplerStage::min_p: on = hf ? !greedy && c.min_p > 0 : static_cast<float>(c.min_p) > 0.0f; break;
      case SamplerStage::typical_p: on = hf ? !greedy && c.typical_p < 1.0 : static_cast<float>(c.typical_p) < 1.0f; break;
      // llama.cpp only.
      case SamplerStage::logit_bias: on = !c.logit_bias.empty(); break;
      case SamplerStage::penalties:
        on = c.repeat_last_n != 0 && !(static_cast<float>(c.repeat_penalty) == 1.0f && static_cast<float>(c.frequency_penalty) == 0.0f &&
                                        static_cast<float>(c.presence_penalty) == 0.0f);
        break;
      case SamplerStage::top_n_sigma: on = static_cast<float>(c.top_n_sigma) > 0.0f; break;
      case SamplerStage::dist: on = false; break;  // the draw, not a filter: its kept is the step's kept
    }
    if (on) out.push_back(stage);
  }
  return out;
}

}  // namespace genrepro

namespace genrepro {

std::optional<SamplerStage> parse_stage_of(Framework f, const std::string& name) {
  if (f == Framework::article) return parse_sampler_stage(name);
  for (SamplerStage s : framework_order(f))
    if (name == to_string(s)) return s;
  return std::nullopt;
}

Checked<std::vector<SamplerStage>> check_framework_order(Framework f, const std::vector<std::string>& names) {
  if (f == Framework::article) return check_sampler_order(names);
  const std::vector<std::string> all = stage_names(framework_order(f));
  const std::string allowed =
      f == Framework::hf ? "Hugging Face's fixed order " + joined(all, ",") + " (generate() cannot reorder its processors)"
                         : "the seven stages {" + joined(llama_cpp_orderable_names(), ", ") +
                               "} in any order, each once (logit_bias always runs first and dist last)";
  std::vector<SamplerStage> stages;
  for (const std::string& name : names) {
    const auto stage = parse_stage_of(f, name);
    if (!stage) return {std::nullopt, ParamProblem{"sampler_order", name, allowed}};
    if (std::find(stages.begin(), stages.end(), *stage) != stages.end())
      return {std::nullopt, ParamProblem{"sampler_order", name + " (repeated)", allowed}};
    stages.push_back(*stage);
  }
  if (f == Framework::llama_cpp && stages.size() == kLlamaCppOrder.size() - 2 &&
      std::find(stages.begin(), stages.end(), SamplerStage::logit_bias) == stages.end() &&
      std::find(stages.begin(), stages.end(), SamplerStage::dist) == stages.end()) {
    stages.insert(stages.begin(), SamplerStage::logit_bias);
    stages.push_back(SamplerStage::dist);
  }
  // The count and the fixed places are check_framework_params' (sampler_order's allowed text).
  return {std::move(stages), std::nullopt};
}

}  // namespace genrepro

namespace genrepro {

nlohmann::ordered_json control_as_written(const FrameworkControls& c, const std::string& key) {
  if (is_list_control(key)) return list_json(c, key, true);
  return control_to_json(c, key);
}

nlohmann::ordered_json control_texts_to_json(const std::vector<ControlText>& texts) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ControlText& t : texts)
    out.push_back({{"control", t.control}, {"entry", t.entry}, {"text", t.text}, {"ids", t.ids}});
  return out;
}

std::optional<std::string> read_control_texts(std::vector<ControlText>& out, const nlohmann::json& j) {
  if (!j.is_array()) return std::string(" is not a list; allowed: a list of {\"control\", \"entry\", \"text\", \"ids\"} objects");
  out.clear();
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string at = "[" + std::to_string(i) + "]";
    const nlohmann::json& e = j[i];
    if (!e.is_object() || e.size() != 4 || !e.contains("control") || !e.contains("entry") || !e.contains("text") || !e.contains("ids"))
      return at + " is not allowed; allowed: an object of exactly \"control\", \"entry\", \"text\" and \"ids\"";
    ControlText t;
    if (!e["control"].is_string()) return at + ".control: expected a string";
    t.control = e["control"].get<std::string>();
    if (!is_integer(e["entry"]) || e["entry"].get<int64_t>() < 0) return at + ".entry: expected an integer >= 0";
    t.entry = e["entry"].get<int64_t>();
    if (!e["text"].is_string()) return at + ".text: expected a string";
    t.text = e["text"].get<std::string>();
    if (!read_tokens(e["ids"], t.ids)) return at + ".ids: expected a list of token ids";
    out.push_back(std::move(t));
  }
  return std::nullopt;
}

std::optional<ControlTextProblem> control_texts_problem(const FrameworkControls& c, Framework f) {
  size_t prev_rank = 0;
  size_t prev_end = 0;  // the first entry after the previous text of the same control
  for (size_t i = 0; i < c.texts.size(); ++i) {
    const ControlText& t = c.texts[i];
    const auto fail = [&](const std::string& problem) { return ControlTextProblem{i, problem}; };
    const ParamRow* k = find_control_key(t.control);
    if (!k || !k->list_valued() || !framework_has(f, *k))
      return fail("control = \"" + t.control + "\" is not allowed; allowed: a list control of framework " + to_string(f) +
                  (f == Framework::hf ? " (suppress_tokens, bad_words_ids, sequence_bias)" : " (logit_bias)"));
    if (t.text.empty()) return fail("text is empty; allowed: the non-empty text the entry was given as");
    if (t.ids.empty()) return fail("ids is empty; allowed: the ids the text encodes to (a text never encodes to none)");
    if (t.control == "suppress_tokens" && t.ids.size() != 1)
      return fail("ids holds " + std::to_string(t.ids.size()) + " tokens; allowed: one (suppress_tokens takes single tokens)");
    const size_t rank = control_rank(t.control);
    const auto entry = static_cast<size_t>(t.entry);
    if (i > 0 && (rank < prev_rank || (rank == prev_rank && entry < prev_end)))
      return fail("entry " + std::to_string(t.entry) + " of " + t.control +
                  " is out of order; allowed: the texts in control order, then by entry, each after the entries of the one before");
    const size_t end = entry + span_of(t);
    if (end > list_size(c, t.control))
      return fail("entry " + std::to_string(t.entry) + " is past the end of " + t.control + " (" +
                  std::to_string(list_size(c, t.control)) + " entries)");
    bool same = true;
    if (t.control == "suppress_tokens") same = c.suppress_tokens[entry] == t.ids[0];
    if (t.control == "bad_words_ids") same = c.bad_words_ids[entry] == t.ids;
    if (t.control == "sequence_bias") same = c.sequence_bias[entry].tokens == t.ids;
    if (t.control == "logit_bias")
      for (size_t k2 = 0; k2 < t.ids.size(); ++k2) {
        const TokenBias& b = c.logit_bias[entry + k2];
        // A NaN bias never equals itself, and check_framework_params refuses it anyway.
        same = same && b.token == t.ids[k2] && (b.bias == c.logit_bias[entry].bias || std::isnan(b.bias));
      }
    if (!same)
      return fail("ids " + nlohmann::json(t.ids).dump() + " are not what " + t.control + "[" + std::to_string(t.entry) +
                  "] holds (" + control_to_json(c, t.control).dump() +
                  "); allowed: the ids the entry holds" + (t.control == "logit_bias" ? ", one entry per id with one bias" : ""));
    prev_rank = rank;
    prev_end = end;
  }
  return std::nullopt;
}

ControlTextRule control_text_rule(Framework f) {
  if (f == Framework::llama_cpp)
    return {false, false, "llama.cpp's rule (common_tokenize with parse_special false: the text as written)"};
  return {true, true, "Hugging Face's rule (add_prefix_space=True, add_special_tokens=False)"};
}

void place_control_text_ids(FrameworkControls& c, const std::vector<std::vector<int64_t>>& ids) {
  int64_t shift = 0;  // logit_bias entries added so far by the texts before
  for (size_t i = 0; i < c.texts.size() && i < ids.size(); ++i) {
    ControlText& t = c.texts[i];
    t.ids = ids[i];
    if (t.control == "suppress_tokens") c.suppress_tokens[static_cast<size_t>(t.entry)] = t.ids.front();
    if (t.control == "bad_words_ids") c.bad_words_ids[static_cast<size_t>(t.entry)] = t.ids;
    if (t.control == "sequence_bias") c.sequence_bias[static_cast<size_t>(t.entry)].tokens = t.ids;
    if (t.control == "logit_bias") {
      t.entry += shift;
      const auto at = c.logit_bias.begin() + t.entry;
      const double bias = at->bias;
      std::vector<TokenBias> entries;
      for (int64_t id : t.ids) entries.push_back({id, bias});
      const auto next = c.logit_bias.erase(at);
      c.logit_bias.insert(next, entries.begin(), entries.end());
      shift += static_cast<int64_t>(t.ids.size()) - 1;
    }
  }
}

}  // namespace genrepro
