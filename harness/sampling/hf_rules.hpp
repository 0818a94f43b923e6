#pragma once
// Hugging Face generate()'s logits processors and warpers on a plain float32 row of scores [V] in
// id order, in place: transformers' generation/logits_process.py (the class each names; literally
// in torch in tests/support/torch_chains/framework_sampler.cpp, the reference) written as the same
// float32 operations in the same order, the softmaxes, exps and sums through the caller's RowMath
// (row_math.hpp). Temperature, top-k and top-p are the article chain's (article_rules.hpp).
#include <cstdint>
#include <vector>

#include "params/run_params.hpp"
#include "sampling/row_math.hpp"

namespace genrepro::sampling::hf {

// SequenceBiasLogitsProcessor: +bias on a sequence's last token when the tokens before it end
// `ids` (a one-token sequence: always). A sequence listed twice keeps its first place and its last
// bias (the processor's dict).
void sequence_bias(std::vector<float>& scores, const std::vector<int64_t>& ids, const std::vector<SequenceBias>& biases);
// RepetitionPenaltyLogitsProcessor: once per distinct token of `ids`, score < 0 ? score * penalty
// : score / penalty (the penalty cast to float, as ATen casts a scalar).
void repetition_penalty(std::vector<float>& scores, const std::vector<int64_t>& ids, double penalty);
// NoRepeatNGramLogitsProcessor: -inf on every token that would complete an n-gram already in `ids`.
void no_repeat_ngram(std::vector<float>& scores, const std::vector<int64_t>& ids, int64_t n);
// NoBadWordsLogitsProcessor: sequence_bias with -inf, [eos] dropped.
void bad_words(std::vector<float>& scores, const std::vector<int64_t>& ids, const std::vector<std::vector<int64_t>>& bad_words_ids,
               int64_t eos_token_id);
// MinLengthLogitsProcessor / MinNewTokensLengthLogitsProcessor: EOS -inf while length < minimum.
void mask_eos_below(std::vector<float>& scores, int64_t length, int64_t minimum, int64_t eos_token_id);
// SuppressTokensLogitsProcessor.
void suppress_tokens(std::vector<float>& scores, const std::vector<int64_t>& tokens);
// MinPLogitsWarper: probabilities (softmax) below float(min_p) * the top one go.
void min_p(std::vector<float>& scores, double p, const RowMath& math);
// TypicalLogitsWarper (min_tokens_to_keep 1).
void typical(std::vector<float>& scores, double mass, const RowMath& math);
// EpsilonLogitsWarper: probabilities below float(epsilon) go, except the top score's tokens.
void epsilon(std::vector<float>& scores, double eps, const RowMath& math);
// EtaLogitsWarper: probabilities below min(eta, sqrt(eta) * exp(-entropy)) go, except the top
// score's tokens; the entropy is torch.distributions.Categorical's.
void eta(std::vector<float>& scores, double eps, const RowMath& math);

}  // namespace genrepro::sampling::hf
