// The frameworks' chains (framework_sampler.hpp). Hugging Face's processors are written with the
// same ATen ops, in the same order, on the same [1, V] float32 scores as transformers'
// generation/logits_process.py (the class each function names), so they agree with it bit for bit
// on the same libtorch; tests/reference/hf_processors.py is the independent plain-PyTorch
// transcription they are held to. llama.cpp's chain is sampling/llama_cpp_chain.hpp.
#include "support/torch_chains/framework_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "sampling/llama_cpp_chain.hpp"
#include "support/torch_chains/samplers.hpp"
#include "support/torch_chains/token_picker.hpp"
#include "params/framework_params.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

using torch::indexing::None;
using torch::indexing::Slice;

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

torch::Tensor ids_tensor(const std::vector<int64_t>& ids) {
  return torch::tensor(ids, torch::kLong).unsqueeze(0);  // input_ids [1, L]
}

torch::Tensor float_scalar(double v) { return torch::full({}, static_cast<float>(v), torch::kFloat32); }

// Tokens still drawable: scores above -infinity.
int64_t finite_count(const torch::Tensor& scores) { return (scores > kMinusInf).sum().item<int64_t>(); }

// The token lists name ids of the model's vocabulary (plan_runs checks experiment files before
// any run; this catches `generate`'s flags, whose ids meet the vocabulary only here).
void check_token_ids(const FrameworkControls& c, int64_t vocab) {
  const auto check = [&](const char* key, int64_t id) {
    if (id >= vocab)
      throw UsageError(std::string("--") + [&] {
        std::string flag = key;
        for (char& ch : flag)
          if (ch == '_') ch = '-';
        return flag;
      }() + " holds token id " + std::to_string(id) + ", which is not allowed; allowed: ids from 0 to " +
                       std::to_string(vocab - 1) + " (the model's vocabulary)");
  };
  for (int64_t id : c.suppress_tokens) check("suppress_tokens", id);
  for (const auto& seq : c.bad_words_ids)
    for (int64_t id : seq) check("bad_words_ids", id);
  for (const SequenceBias& b : c.sequence_bias)
    for (int64_t id : b.tokens) check("sequence_bias", id);
  for (const TokenBias& b : c.logit_bias) check("logit_bias", b.token);
}

[[noreturn]] void nothing_left(int64_t step, const std::string& stage) {
  throw NumericsError("step " + std::to_string(step) + ": no token is left to pick after the " + stage +
                      " stage (every logit is -infinity); the masks and biases (suppress_tokens, bad_words_ids, logit_bias, "
                      "min_new_tokens) remove the whole vocabulary; remove fewer tokens");
}

// ---------------------------------------------------------------- Hugging Face

class HfSampler : public FrameworkSampler {
 public:
  explicit HfSampler(const SamplingParams& s)
      : s_(s),
        greedy_(s.mode == DecodeMode::greedy || s.temperature == 0),
        stages_(active_stages(s, greedy_)) {
    if (!greedy_) picker_ = make_token_picker(s);
  }

  FrameworkStep step(const torch::Tensor& logits, const ChainHistory& h, bool pick) override {
    FrameworkStep out;
    // next_token_logits = outputs.logits[:, -1, :].to(copy=True, dtype=torch.float32)
    torch::Tensor scores = logits.to(torch::kFloat32).reshape({1, -1});
    const FrameworkControls& c = s_.controls;
    if (step_ == 0) check_token_ids(c, scores.size(-1));
    const int64_t length = static_cast<int64_t>(h.ids.size());
    for (SamplerStage stage : stages_) {
      switch (stage) {
        case SamplerStage::sequence_bias: scores = hf::sequence_bias(scores, h.ids, c.sequence_bias); break;
        case SamplerStage::repetition_penalty: scores = hf::repetition_penalty(scores, h.ids, c.repetition_penalty); break;
        case SamplerStage::no_repeat_ngram_size: scores = hf::no_repeat_ngram(scores, h.ids, c.no_repeat_ngram_size); break;
        case SamplerStage::bad_words_ids: scores = hf::bad_words(scores, h.ids, c.bad_words_ids, h.eos_token_id); break;
        case SamplerStage::min_length: scores = hf::mask_eos_below(scores, length, c.min_length, h.eos_token_id); break;
        case SamplerStage::min_new_tokens:
          scores = hf::mask_eos_below(scores, length - h.prompt_length, c.min_new_tokens, h.eos_token_id);
          break;
        case SamplerStage::suppress_tokens: scores = hf::suppress_tokens(scores, c.suppress_tokens); break;
        case SamplerStage::temperature: scores = hf::temperature(scores, s_.temperature); break;
        case SamplerStage::top_k: scores = hf::top_k(scores, s_.top_k); break;
        case SamplerStage::top_p: scores = hf::top_p(scores, s_.top_p); break;
        case SamplerStage::min_p: scores = hf::min_p(scores, c.min_p); break;
        case SamplerStage::typical_p: scores = hf::typical(scores, c.typical_p); break;
        case SamplerStage::epsilon_cutoff: scores = hf::epsilon(scores, c.epsilon_cutoff); break;
        case SamplerStage::eta_cutoff: scores = hf::eta(scores, c.eta_cutoff); break;
        default: throw std::logic_error("not a Hugging Face stage");  // a bug: active_stages lists only these
      }
      const int64_t kept = finite_count(scores);
      out.stages.push_back({to_string(stage), kept});
      if (kept == 0) nothing_left(step_, to_string(stage));
    }
    if (stages_.empty() && finite_count(scores) == 0) nothing_left(step_, "first");
    // probs = nn.functional.softmax(next_token_scores, dim=-1)
    out.final_probs = torch::softmax(scores, -1).reshape({-1});
    if (pick) {
      // greedy: next_tokens = torch.argmax(next_token_scores, dim=-1); sample: torch.multinomial(probs, 1)
      if (greedy_) {
        out.token = scores.argmax(-1).item<int64_t>();
      } else {
        const RacePick drawn = picker_->pick_with_margin(out.final_probs);
        out.token = drawn.token;
        out.draw = race_draw_record(drawn);
      }
    }
    ++step_;
    return out;
  }

 private:
  SamplingParams s_;
  bool greedy_;
  std::vector<SamplerStage> stages_;
  std::unique_ptr<TokenPicker> picker_;
  int64_t step_ = 0;
};

// ---------------------------------------------------------------- llama.cpp

class LlamaCppSampler : public FrameworkSampler {
 public:
  explicit LlamaCppSampler(const SamplingParams& s)
      : s_(s), stages_(active_stages(s, false)), dist_(static_cast<uint32_t>(s.seed)) {
    for (const TokenBias& b : s.controls.logit_bias)
      biases_.emplace_back(static_cast<int32_t>(b.token), static_cast<float>(b.bias));
  }

  FrameworkStep step(const torch::Tensor& logits, const ChainHistory& h, bool pick) override {
    FrameworkStep out;
    const torch::Tensor contiguous = logits.to(torch::kFloat32).contiguous();
    const int64_t vocab = contiguous.numel();
    llama_cpp::Candidates cur(contiguous.data_ptr<float>(), static_cast<size_t>(vocab));
    const FrameworkControls& c = s_.controls;
    if (step_ == 0) check_token_ids(c, vocab);
    const size_t min_keep = static_cast<size_t>(c.min_keep);
    for (SamplerStage stage : stages_) {
      switch (stage) {
        case SamplerStage::logit_bias: llama_cpp::logit_bias(cur, biases_); break;
        case SamplerStage::penalties:
          llama_cpp::penalties(cur, llama_cpp::penalty_window(h.ids, c.repeat_last_n), static_cast<float>(c.repeat_penalty),
                               static_cast<float>(c.frequency_penalty), static_cast<float>(c.presence_penalty));
          break;
        case SamplerStage::top_n_sigma: llama_cpp::top_n_sigma(cur, static_cast<float>(c.top_n_sigma)); break;
        case SamplerStage::top_k: llama_cpp::top_k(cur, static_cast<int32_t>(s_.top_k)); break;
        case SamplerStage::typical_p: llama_cpp::typical(cur, static_cast<float>(c.typical_p), min_keep); break;
        case SamplerStage::top_p: llama_cpp::top_p(cur, static_cast<float>(s_.top_p), min_keep, scratch_); break;
        case SamplerStage::min_p: llama_cpp::min_p(cur, static_cast<float>(c.min_p), min_keep); break;
        case SamplerStage::temperature:
          llama_cpp::temp_ext(cur, static_cast<float>(s_.temperature), static_cast<float>(c.dynatemp_range),
                              static_cast<float>(c.dynatemp_exponent));
          break;
        default: throw std::logic_error("not a llama.cpp stage");  // a bug: active_stages lists only these
      }
      const int64_t kept = cur.finite_count();
      out.stages.push_back({to_string(stage), kept});
      if (kept == 0) nothing_left(step_, to_string(stage));
    }
    if (pick) {
      if (const auto edge = dist_.apply(cur)) out.draw = DrawRecord{DrawRule::inverse_cdf, edge->distance, edge->runner_up};
      out.token = cur.data[cur.selected].id;
    } else {
      llama_cpp::Dist::probabilities(cur);
    }
    // The distribution dist drew from, over the vocabulary: each candidate's p at its id.
    out.final_probs = torch::zeros({vocab}, torch::kFloat32);
    float* p = out.final_probs.data_ptr<float>();
    for (size_t i = 0; i < cur.size; ++i) p[cur.data[i].id] = cur.data[i].p;
    ++step_;
    return out;
  }

 private:
  SamplingParams s_;
  std::vector<SamplerStage> stages_;
  llama_cpp::Dist dist_;
  std::vector<llama_cpp::Candidate> scratch_;  // top-p's buf_sort
  std::vector<std::pair<int32_t, float>> biases_;
  int64_t step_ = 0;
};

// HF _convert_list_arguments_into_dict: {tuple(ids): bias}; a repeated sequence keeps its first
// place and its last bias, as a Python dict does.
std::vector<SequenceBias> as_dict(const std::vector<SequenceBias>& biases) {
  std::vector<SequenceBias> dict;
  for (const SequenceBias& b : biases) {
    auto it = std::find_if(dict.begin(), dict.end(), [&](const SequenceBias& d) { return d.tokens == b.tokens; });
    if (it == dict.end()) dict.push_back(b);
    else it->bias = b.bias;
  }
  return dict;
}

}  // namespace

namespace hf {

// SequenceBiasLogitsProcessor.__call__ (with _prepare_bias_variables).
torch::Tensor sequence_bias(const torch::Tensor& scores, const std::vector<int64_t>& ids, const std::vector<SequenceBias>& biases) {
  const std::vector<SequenceBias> dict = as_dict(biases);
  const int64_t vocab = scores.size(-1);
  // self.length_1_bias = torch.zeros((vocabulary_size,), dtype=torch.float)
  // self.length_1_bias[single_token_ids] = torch.tensor(single_token_biases)
  torch::Tensor length_1_bias = torch::zeros({vocab}, torch::kFloat32);
  std::vector<int64_t> single_ids;
  std::vector<float> single_biases;
  for (const SequenceBias& b : dict) {
    if (b.tokens.size() != 1) continue;
    single_ids.push_back(b.tokens[0]);
    single_biases.push_back(static_cast<float>(b.bias));
  }
  if (!single_ids.empty())
    length_1_bias.index_put_({torch::tensor(single_ids, torch::kLong)}, torch::tensor(single_biases, torch::kFloat32));
  // bias = torch.zeros_like(scores); bias += self.length_1_bias
  torch::Tensor bias = torch::zeros_like(scores);
  bias += length_1_bias;
  const torch::Tensor input_ids = ids_tensor(ids);
  for (const SequenceBias& b : dict) {
    if (b.tokens.size() == 1) continue;
    if (b.tokens.size() > ids.size()) continue;  // longer than the context
    const int64_t prefix_length = static_cast<int64_t>(b.tokens.size()) - 1;
    const int64_t last_token = b.tokens.back();
    const std::vector<int64_t> prefix(b.tokens.begin(), b.tokens.end() - 1);
    // matching_rows = torch.eq(input_ids[:, -prefix_length:], torch.tensor(sequence_ids[:-1])).prod(dim=1)
    const torch::Tensor matching_rows =
        torch::eq(input_ids.index({Slice(), Slice(-prefix_length, None)}), torch::tensor(prefix, torch::kLong)).prod(1);
    // bias[:, last_token] += torch.where(matching_rows.bool(), torch.tensor(sequence_bias), torch.tensor(0.0))
    bias.index({Slice(), last_token}) += torch::where(matching_rows.to(torch::kBool), float_scalar(b.bias), float_scalar(0.0));
  }
  return scores + bias;
}

// RepetitionPenaltyLogitsProcessor.__call__: once per distinct token of the whole sequence.
torch::Tensor repetition_penalty(const torch::Tensor& scores, const std::vector<int64_t>& ids, double penalty) {
  const torch::Tensor input_ids = ids_tensor(ids);
  torch::Tensor score = torch::gather(scores, 1, input_ids);
  // torch.where(score < 0, score * penalty, score / penalty)
  score = torch::where(score < 0, score * penalty, score / penalty);
  return scores.scatter(1, input_ids, score);
}

// NoRepeatNGramLogitsProcessor: ban every token that would complete an n-gram already in the
// sequence (the prompt included).
torch::Tensor no_repeat_ngram(const torch::Tensor& scores, const std::vector<int64_t>& ids, int64_t n) {
  torch::Tensor out = scores.clone();
  const int64_t cur_len = static_cast<int64_t>(ids.size());
  if (cur_len + 1 < n) return out;  // _calc_banned_ngram_tokens: no n-gram can be completed yet
  std::vector<int64_t> banned;
  const int64_t start = cur_len + 1 - n;  // the prefix the next token would complete
  for (int64_t i = 0; i + n <= cur_len; ++i) {
    bool match = true;
    for (int64_t j = 0; j + 1 < n && match; ++j) match = ids[static_cast<size_t>(i + j)] == ids[static_cast<size_t>(start + j)];
    if (match) banned.push_back(ids[static_cast<size_t>(i + n - 1)]);
  }
  // scores_processed[i, banned_tokens] = -float("inf")
  if (!banned.empty()) out.index_put_({0, torch::tensor(banned, torch::kLong)}, kMinusInf);
  return out;
}

// NoBadWordsLogitsProcessor: SequenceBias with -inf for every sequence but [eos].
torch::Tensor bad_words(const torch::Tensor& scores, const std::vector<int64_t>& ids,
                        const std::vector<std::vector<int64_t>>& bad_words_ids, int64_t eos_token_id) {
  std::vector<SequenceBias> biases;
  for (const auto& seq : bad_words_ids)
    if (!(seq.size() == 1 && seq[0] == eos_token_id)) biases.push_back({seq, -std::numeric_limits<double>::infinity()});
  if (biases.empty()) return scores;
  return sequence_bias(scores, ids, biases);
}

// MinLengthLogitsProcessor / MinNewTokensLengthLogitsProcessor: EOS to -inf while length < minimum.
torch::Tensor mask_eos_below(const torch::Tensor& scores, int64_t length, int64_t minimum, int64_t eos_token_id) {
  if (length >= minimum) return scores.clone();
  const torch::Tensor vocab = torch::arange(scores.size(-1));
  const torch::Tensor eos_mask = torch::isin(vocab, torch::tensor({eos_token_id}, torch::kLong));
  return torch::where(eos_mask, float_scalar(-std::numeric_limits<double>::infinity()), scores);
}

// SuppressTokensLogitsProcessor: torch.where(isin(vocab, suppress_tokens), -inf, scores).
torch::Tensor suppress_tokens(const torch::Tensor& scores, const std::vector<int64_t>& tokens) {
  const torch::Tensor vocab = torch::arange(scores.size(-1));
  const torch::Tensor mask = torch::isin(vocab, torch::tensor(tokens, torch::kLong));
  return torch::where(mask, float_scalar(-std::numeric_limits<double>::infinity()), scores);
}

// TemperatureLogitsWarper: scores / temperature.
torch::Tensor temperature(const torch::Tensor& scores, double t) { return scores / t; }

// TopKLogitsWarper (min_tokens_to_keep 1): mask scores below the k-th largest; ties stay.
torch::Tensor top_k(const torch::Tensor& scores, int64_t k) {
  const int64_t kk = std::min(std::max<int64_t>(k, 1), scores.size(-1));
  const torch::Tensor kth = std::get<0>(torch::topk(scores, kk)).index({"...", Slice(-1, None)});
  return scores.masked_fill(scores < kth, kMinusInf);
}

// TopPLogitsWarper: the fast form of top_p_filter_hf, held to the literal one (fast_top_p_test).
torch::Tensor top_p(const torch::Tensor& scores, double p) {
  return top_p_filter_hf(scores.reshape({-1}), p, 1).reshape(scores.sizes());
}

// MinPLogitsWarper: probabilities (after temperature) below min_p * the top probability go.
torch::Tensor min_p(const torch::Tensor& scores, double p) {
  const torch::Tensor probs = torch::softmax(scores, -1);
  const torch::Tensor top_probs = probs.amax(-1, /*keepdim=*/true);
  const torch::Tensor scaled_min_p = p * top_probs;
  return scores.masked_fill(probs < scaled_min_p, kMinusInf);
}

// TypicalLogitsWarper (min_tokens_to_keep 1).
torch::Tensor typical(const torch::Tensor& scores, double mass) {
  const torch::Tensor normalized = torch::log_softmax(scores, -1);
  const torch::Tensor p = torch::exp(normalized);
  const torch::Tensor ent = -(normalized * p).nansum(-1, /*keepdim=*/true);
  const torch::Tensor shifted_scores = torch::abs((-normalized) - ent);
  const auto [sorted_scores, sorted_indices] = torch::sort(shifted_scores, /*dim=*/-1, /*descending=*/false);
  const torch::Tensor sorted_logits = scores.gather(-1, sorted_indices);
  const torch::Tensor cumulative_probs = sorted_logits.softmax(-1).cumsum(-1);
  torch::Tensor last_ind = (cumulative_probs < mass).sum(1);
  last_ind.clamp_(c10::nullopt, sorted_scores.size(-1) - 1);
  torch::Tensor sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind.view({-1, 1}));
  sorted_indices_to_remove.index_put_({"...", Slice(None, 1)}, 0);
  const torch::Tensor indices_to_remove = sorted_indices_to_remove.scatter(1, sorted_indices, sorted_indices_to_remove);
  return scores.masked_fill(indices_to_remove, kMinusInf);
}

// EpsilonLogitsWarper (min_tokens_to_keep 1).
torch::Tensor epsilon(const torch::Tensor& scores, double eps) {
  const torch::Tensor probabilities = scores.softmax(-1);
  torch::Tensor indices_to_remove = probabilities < eps;
  const torch::Tensor top = std::get<0>(torch::topk(scores, 1)).index({"...", Slice(-1, None)});
  indices_to_remove = indices_to_remove & (scores < top);
  return scores.masked_fill(indices_to_remove, kMinusInf);
}

// EtaLogitsWarper (min_tokens_to_keep 1); the entropy is torch.distributions.Categorical's.
torch::Tensor eta(const torch::Tensor& scores, double eps) {
  const torch::Tensor probabilities = scores.softmax(-1);
  // Categorical(logits=scores): logits - logsumexp; entropy = -(clamp(logits, finfo.min) * softmax(logits)).sum(-1)
  const torch::Tensor logits = scores - scores.logsumexp(-1, /*keepdim=*/true);
  const torch::Tensor probs = torch::softmax(logits, -1);
  const torch::Tensor clamped = torch::clamp(logits, std::numeric_limits<float>::lowest());
  const torch::Tensor entropy = -(clamped * probs).sum(-1);
  const torch::Tensor epsilon = float_scalar(eps);  // self.epsilon = torch.tensor(epsilon)
  const torch::Tensor cutoff = torch::min(epsilon, torch::sqrt(epsilon) * torch::exp(-entropy)).unsqueeze(-1);
  torch::Tensor indices_to_remove = probabilities < cutoff;
  const torch::Tensor top = std::get<0>(torch::topk(scores, 1)).index({"...", Slice(-1, None)});
  indices_to_remove = indices_to_remove & (scores < top);
  return scores.masked_fill(indices_to_remove, kMinusInf);
}

}  // namespace hf

std::unique_ptr<FrameworkSampler> make_framework_sampler(const SamplingParams& s) {
  switch (s.framework) {
    case Framework::hf: return std::make_unique<HfSampler>(s);
    case Framework::llama_cpp: return std::make_unique<LlamaCppSampler>(s);
    case Framework::article: break;
  }
  throw std::logic_error("make_framework_sampler: the article's chain is samplers.hpp's");  // a bug
}

}  // namespace genrepro
