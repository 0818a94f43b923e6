#pragma once
// The article chain's stages on a plain float32 row of logits [V] in id order, in place: what
// engine/samplers.hpp computes with torch ops, written as the same float32 operations in the same
// order (sampling/aten_float.hpp for softmax and cumsum). Masked tokens get -infinity, as there.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace genrepro::sampling {

// logits / T (torch: a float32 tensor divided by the double T, which ATen casts to float first).
// T <= 0 keeps only the argmax (the first maximum), every other logit -infinity.
void temperature_rule(std::vector<float>& logits, double temperature);

// Hugging Face's TopKLogitsWarper: every logit below the k-th largest goes, so ties with the k-th
// stay. k <= 0 or k >= V: unchanged.
void top_k_rule(std::vector<float>& logits, int64_t k);

// The article's top_p_filter: sort descending, softmax of the sorted values, cumsum, remove where
// cumulative >= float(p) from the position after the first that reaches it; the top token always
// stays. p >= 1: unchanged. Equal values sort as torch.sort leaves them (sorted_order), so a tie
// at the boundary keeps the token torch keeps.
void top_p_article_rule(std::vector<float>& logits, double p);

// Hugging Face's TopPLogitsWarper: sort ascending, softmax, cumsum, remove where cumulative <=
// float(1 - p), keep the last `min_tokens_to_keep`. p >= 1: unchanged. Ties as above (on short
// rows the higher index sorts later and stays).
void top_p_hf_rule(std::vector<float>& logits, double p, int64_t min_tokens_to_keep = 1);

// Indices of `values` sorted by value, descending or ascending, in torch.sort's order (its CPU
// kernel's std::sort over (value, index) pairs, NaN as the largest value): equal values in index
// order on rows of up to 16, and in that introsort's order (no rule by index) on longer rows.
std::vector<size_t> sorted_order(const std::vector<float>& values, bool descending);

}  // namespace genrepro::sampling
