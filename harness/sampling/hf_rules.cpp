// Hugging Face's processors and warpers on a plain row (hf_rules.hpp). Each function follows its
// namesake in transformers op for op; the comments quote the torch line.
#include "sampling/hf_rules.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "sampling/article_rules.hpp"

namespace genrepro::sampling::hf {

namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

bool in_vocab(int64_t id, const std::vector<float>& scores) { return id >= 0 && id < static_cast<int64_t>(scores.size()); }

// _convert_list_arguments_into_dict: {tuple(ids): bias}; a repeated sequence keeps its first place
// and its last bias, as a Python dict does.
std::vector<SequenceBias> as_dict(const std::vector<SequenceBias>& biases) {
  std::vector<SequenceBias> dict;
  for (const SequenceBias& b : biases) {
    auto it = std::find_if(dict.begin(), dict.end(), [&](const SequenceBias& d) { return d.tokens == b.tokens; });
    if (it == dict.end()) dict.push_back(b);
    else it->bias = b.bias;
  }
  return dict;
}

// torch.equal(input_ids[:, -len(prefix):], prefix)
bool ends_with(const std::vector<int64_t>& ids, const std::vector<int64_t>& tokens, size_t prefix_length) {
  const size_t start = ids.size() - prefix_length;
  for (size_t j = 0; j < prefix_length; ++j)
    if (ids[start + j] != tokens[j]) return false;
  return true;
}

// The score of the most likely token: torch::topk(scores, 1)[0].
float top_score(const std::vector<float>& scores) { return *std::max_element(scores.begin(), scores.end()); }

// scores.masked_fill(remove, -inf)
void mask(std::vector<float>& scores, const std::vector<bool>& remove) {
  for (size_t i = 0; i < scores.size(); ++i)
    if (remove[i]) scores[i] = kMinusInf;
}

}  // namespace

void sequence_bias(std::vector<float>& scores, const std::vector<int64_t>& ids, const std::vector<SequenceBias>& biases) {
  const std::vector<SequenceBias> dict = as_dict(biases);
  const size_t vocab = scores.size();
  // length_1_bias = torch.zeros((vocabulary_size,)); length_1_bias[single_token_ids] = single_token_biases
  std::vector<float> length_1_bias(vocab, 0.0f);
  for (const SequenceBias& b : dict)
    if (b.tokens.size() == 1 && in_vocab(b.tokens[0], scores)) length_1_bias[static_cast<size_t>(b.tokens[0])] = static_cast<float>(b.bias);
  // bias = torch.zeros_like(scores); bias += self.length_1_bias
  std::vector<float> bias(vocab, 0.0f);
  for (size_t i = 0; i < vocab; ++i) bias[i] += length_1_bias[i];
  for (const SequenceBias& b : dict) {
    if (b.tokens.size() == 1 || b.tokens.size() > ids.size()) continue;  // longer than the context
    const int64_t last_token = b.tokens.back();
    if (!in_vocab(last_token, scores)) continue;
    // bias[:, last_token] += torch.where(matching_rows.bool(), torch.tensor(sequence_bias), torch.tensor(0.0))
    bias[static_cast<size_t>(last_token)] += ends_with(ids, b.tokens, b.tokens.size() - 1) ? static_cast<float>(b.bias) : 0.0f;
  }
  // scores + bias
  for (size_t i = 0; i < vocab; ++i) scores[i] = scores[i] + bias[i];
}

void repetition_penalty(std::vector<float>& scores, const std::vector<int64_t>& ids, double penalty) {
  // score = torch.gather(scores, 1, input_ids); every copy of a token reads the same score and
  // scatter writes the same result back, so each distinct token is penalised once.
  const float factor = static_cast<float>(penalty);
  for (int64_t id : std::set<int64_t>(ids.begin(), ids.end())) {
    if (!in_vocab(id, scores)) continue;
    float& score = scores[static_cast<size_t>(id)];
    // torch.where(score < 0, score * penalty, score / penalty)
    score = score < 0 ? score * factor : score / factor;
  }
}

void no_repeat_ngram(std::vector<float>& scores, const std::vector<int64_t>& ids, int64_t n) {
  const int64_t cur_len = static_cast<int64_t>(ids.size());
  if (n <= 0 || cur_len + 1 < n) return;  // _calc_banned_ngram_tokens: no n-gram can be completed yet
  const int64_t start = cur_len + 1 - n;  // the prefix the next token would complete
  for (int64_t i = 0; i + n <= cur_len; ++i) {
    bool match = true;
    for (int64_t j = 0; j + 1 < n && match; ++j) match = ids[static_cast<size_t>(i + j)] == ids[static_cast<size_t>(start + j)];
    const int64_t banned = ids[static_cast<size_t>(i + n - 1)];
    // scores_processed[i, banned_tokens] = -float("inf")
    if (match && in_vocab(banned, scores)) scores[static_cast<size_t>(banned)] = kMinusInf;
  }
}

void bad_words(std::vector<float>& scores, const std::vector<int64_t>& ids, const std::vector<std::vector<int64_t>>& bad_words_ids,
               int64_t eos_token_id) {
  std::vector<SequenceBias> biases;
  for (const auto& seq : bad_words_ids)
    if (!(seq.size() == 1 && seq[0] == eos_token_id)) biases.push_back({seq, -std::numeric_limits<double>::infinity()});
  if (!biases.empty()) sequence_bias(scores, ids, biases);
}

void mask_eos_below(std::vector<float>& scores, int64_t length, int64_t minimum, int64_t eos_token_id) {
  // torch.where(isin(vocab, eos), -inf, scores) while the length is below the minimum
  if (length < minimum && in_vocab(eos_token_id, scores)) scores[static_cast<size_t>(eos_token_id)] = kMinusInf;
}

void suppress_tokens(std::vector<float>& scores, const std::vector<int64_t>& tokens) {
  for (int64_t t : tokens)
    if (in_vocab(t, scores)) scores[static_cast<size_t>(t)] = kMinusInf;
}

void min_p(std::vector<float>& scores, double p, const RowMath& math) {
  // probs = torch.softmax(scores, -1); top_probs = probs.amax(-1); scaled_min_p = min_p * top_probs
  const std::vector<float> probs = math.softmax(scores);
  const float scaled_min_p = static_cast<float>(p) * *std::max_element(probs.begin(), probs.end());
  // scores.masked_fill(probs < scaled_min_p, -inf)
  std::vector<bool> remove(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) remove[i] = probs[i] < scaled_min_p;
  mask(scores, remove);
}

void typical(std::vector<float>& scores, double mass, const RowMath& math) {
  const size_t n = scores.size();
  if (n == 0) return;
  // normalized = log_softmax(scores); p = exp(normalized); ent = -(normalized * p).nansum(-1)
  const std::vector<float> normalized = math.log_softmax(scores);
  const std::vector<float> p = math.exp(normalized);
  std::vector<float> terms(n);
  for (size_t i = 0; i < n; ++i) terms[i] = normalized[i] * p[i];
  const float ent = -math.sum(terms, /*ignore_nan=*/true);  // -inf * 0 is NaN: counted as 0
  // shifted_scores = torch.abs((-normalized) - ent); sorted ascending
  std::vector<float> shifted(n);
  for (size_t i = 0; i < n; ++i) shifted[i] = std::fabs((-normalized[i]) - ent);
  const std::vector<size_t> sorted_indices = sorted_order(shifted, /*descending=*/false);
  // sorted_logits = scores.gather(-1, sorted_indices); cumulative_probs = sorted_logits.softmax(-1).cumsum(-1)
  std::vector<float> sorted_logits(n);
  for (size_t i = 0; i < n; ++i) sorted_logits[i] = scores[sorted_indices[i]];
  const std::vector<float> cumulative_probs = math.cumsum(math.softmax(sorted_logits));
  // last_ind = (cumulative_probs < mass).sum(1), clamped to n - 1
  const float threshold = static_cast<float>(mass);
  size_t last_ind = 0;
  for (float c : cumulative_probs) last_ind += c < threshold ? 1 : 0;
  last_ind = std::min(last_ind, n - 1);
  // sorted_indices_to_remove = sorted_scores > sorted_scores.gather(1, last_ind); [..., :1] = 0
  const float boundary = shifted[sorted_indices[last_ind]];
  std::vector<bool> remove(n, false);
  for (size_t i = 1; i < n; ++i) remove[sorted_indices[i]] = shifted[sorted_indices[i]] > boundary;
  mask(scores, remove);
}

void epsilon(std::vector<float>& scores, double eps, const RowMath& math) {
  if (scores.empty()) return;
  // probabilities = scores.softmax(-1); indices_to_remove = (probabilities < epsilon) & (scores < top)
  const std::vector<float> probabilities = math.softmax(scores);
  const float threshold = static_cast<float>(eps);
  const float top = top_score(scores);
  std::vector<bool> remove(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) remove[i] = probabilities[i] < threshold && scores[i] < top;
  mask(scores, remove);
}

void eta(std::vector<float>& scores, double eps, const RowMath& math) {
  const size_t n = scores.size();
  if (n == 0) return;
  const std::vector<float> probabilities = math.softmax(scores);
  // Categorical(logits=scores): logits = scores - scores.logsumexp(-1)
  const float logsumexp = math.logsumexp(scores);
  std::vector<float> logits(n);
  for (size_t i = 0; i < n; ++i) logits[i] = scores[i] - logsumexp;
  // entropy = -(clamp(logits, finfo.min) * softmax(logits)).sum(-1)
  const std::vector<float> probs = math.softmax(logits);
  std::vector<float> terms(n);
  for (size_t i = 0; i < n; ++i) terms[i] = std::max(logits[i], std::numeric_limits<float>::lowest()) * probs[i];
  const float entropy = -math.sum(terms, /*ignore_nan=*/false);
  // eta = torch.min(epsilon, torch.sqrt(epsilon) * torch.exp(-entropy)), epsilon a float32 tensor
  const float epsilon_f = static_cast<float>(eps);
  const float cutoff = std::min(epsilon_f, std::sqrt(epsilon_f) * math.exp(-entropy));
  const float top = top_score(scores);
  std::vector<bool> remove(n);
  for (size_t i = 0; i < n; ++i) remove[i] = probabilities[i] < cutoff && scores[i] < top;
  mask(scores, remove);
}

}  // namespace genrepro::sampling::hf
