#pragma once
// The article chain's stages on a plain float32 row of logits [V] in id order, in place: the
// article's torch lines (tests/support/torch_chains.hpp keeps them literally, as the reference)
// as the same float32 operations in the same order, the softmax and cumsum through the caller's
// RowMath. Masked tokens get -infinity, as there.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sampling/row_math.hpp"

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
//
// Only the sorted values enter the arithmetic, and the sort's indices decide nothing unless the
// last kept value also occurs among the removed ones (a tie at the boundary). So the values are
// sorted by a radix sort (about 20x faster than sorting (value, index) pairs over GPT-2's 50,257)
// and the pair sort runs only for such a tie or a NaN: the same kept set, bit for bit.
void top_p_article_rule(std::vector<float>& logits, double p, const RowMath& math);

// Hugging Face's TopPLogitsWarper: sort ascending, softmax, cumsum, remove where cumulative <=
// float(1 - p), keep the last `min_tokens_to_keep`. p >= 1: unchanged. Ties as above (on short
// rows the higher index sorts later and stays). Fast as the article's rule, for the same reason.
void top_p_hf_rule(std::vector<float>& logits, double p, const RowMath& math, int64_t min_tokens_to_keep = 1);

// Indices of `values` sorted by value, descending or ascending, in torch.sort's order (its CPU
// kernel's std::sort over (value, index) pairs, NaN as the largest value): equal values in index
// order on rows of up to 16, and in that introsort's order (no rule by index) on longer rows.
std::vector<size_t> sorted_order(const std::vector<float>& values, bool descending);

}  // namespace genrepro::sampling
