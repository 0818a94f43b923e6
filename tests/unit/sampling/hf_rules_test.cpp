// Hugging Face's processors and warpers on plain float32 rows, on cases small enough to check by
// hand (each comment gives the arithmetic).
#include "sampling/hf_rules.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "sampling/aten_float.hpp"

namespace genrepro::sampling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Hand-computed values to 6-7 digits against float32 arithmetic (see article_rules_test.cpp).
constexpr double kHandTolerance = 1e-6;

int kept(const std::vector<float>& v) {
  int n = 0;
  for (float x : v) n += x > -kInf ? 1 : 0;
  return n;
}

TEST(PlainHf, RepetitionPenaltyOncePerDistinctTokenOfTheWholeHistory) {
  std::vector<float> v = {2.0f, -1.0f, 0.5f, 0.0f};
  hf::repetition_penalty(v, {0, 1, 0}, 1.3);  // token 0 twice: still divided once
  EXPECT_EQ(v[0], 2.0f / 1.3f);
  EXPECT_EQ(v[1], -1.0f * 1.3f);
  EXPECT_EQ(v[2], 0.5f);
  EXPECT_EQ(v[3], 0.0f);
}

TEST(PlainHf, NoRepeatNgramBansWhatWouldCompleteASeenNgram) {
  // History 5 6 5: the bigram (5, 6) was seen, and the sequence ends in 5, so 6 is banned.
  std::vector<float> v(8, 1.0f);
  hf::no_repeat_ngram(v, {5, 6, 5}, 2);
  EXPECT_EQ(v[6], -kInf);
  EXPECT_EQ(kept(v), 7);
  std::vector<float> short_history(8, 1.0f);
  hf::no_repeat_ngram(short_history, {5}, 3);  // no 3-gram can be completed yet
  EXPECT_EQ(kept(short_history), 8);
}

TEST(PlainHf, BadWordsMaskTheLastTokenOnlyAfterItsPrefixAndDropEosAlone) {
  std::vector<float> v(6, 0.0f);
  hf::bad_words(v, {1, 2}, {{2, 3}, {4}, {5}}, /*eos_token_id=*/5);
  EXPECT_EQ(v[3], -kInf);  // [2, 3]: the history ends in 2
  EXPECT_EQ(v[4], -kInf);  // [4]: always
  EXPECT_EQ(v[5], 0.0f);   // [eos] alone is dropped, as NoBadWordsLogitsProcessor does
  std::vector<float> w(6, 0.0f);
  hf::bad_words(w, {1, 1}, {{2, 3}}, 5);
  EXPECT_EQ(kept(w), 6);
}

TEST(PlainHf, SequenceBiasAddsOnMatchAndAListedSequenceKeepsItsLastBias) {
  std::vector<float> v = {1.0f, 1.0f, 1.0f, 1.0f};
  hf::sequence_bias(v, {0, 1}, {{{2}, 0.5}, {{1, 3}, -2.0}, {{0, 3}, 7.0}, {{2}, 0.25}});
  EXPECT_EQ(v[2], 1.25f);  // [2] listed twice: the dict keeps the last bias
  EXPECT_EQ(v[3], -1.0f);  // [1, 3] matches the history's end; [0, 3] does not
  EXPECT_EQ(v[0], 1.0f);
}

TEST(PlainHf, MinimumLengthsMaskEosOnlyBelowThem) {
  std::vector<float> v = {1.0f, 2.0f, 3.0f};
  hf::mask_eos_below(v, 2, 3, /*eos_token_id=*/2);
  EXPECT_EQ(v[2], -kInf);
  std::vector<float> w = {1.0f, 2.0f, 3.0f};
  hf::mask_eos_below(w, 3, 3, 2);
  EXPECT_EQ(w[2], 3.0f);
}

TEST(PlainHf, SuppressTokens) {
  std::vector<float> v = {1.0f, 2.0f, 3.0f};
  hf::suppress_tokens(v, {0, 2});
  EXPECT_EQ(v, (std::vector<float>{-kInf, 2.0f, -kInf}));
}

TEST(PlainHf, MinPOnProbabilities) {
  // softmax([3, 2, 1, 0]) = 0.6439, 0.2369, 0.0871, 0.0321; min_p 0.2 keeps p >= 0.1288: 2 tokens.
  std::vector<float> v = {3, 2, 1, 0};
  hf::min_p(v, 0.2, aten_float_math());
  EXPECT_EQ(kept(v), 2);
  EXPECT_NEAR(aten::softmax(v)[1], 0.2689414, kHandTolerance);
}

TEST(PlainHf, EpsilonKeepsTheTopTokenWhateverItsProbability) {
  // softmax([0, 0, 0, 0]) = 0.25 each: epsilon 0.3 removes all but the top score's tokens, here all
  // four are the top score, so all stay; [1, 0, 0, 0]: 0.475, 0.175 x 3 -> only the first.
  std::vector<float> flat = {0, 0, 0, 0};
  hf::epsilon(flat, 0.3, aten_float_math());
  EXPECT_EQ(kept(flat), 4);
  std::vector<float> v = {1, 0, 0, 0};
  hf::epsilon(v, 0.3, aten_float_math());
  EXPECT_EQ(kept(v), 1);
}

TEST(PlainHf, EtaCutsBelowTheEntropyScaledThreshold) {
  // softmax([2, 0, -3]) = 0.8756, 0.1185, 0.0059; entropy H = 0.3993; eta 0.1: cutoff
  // min(0.1, sqrt(0.1) * e^-H = 0.2121) = 0.1: the 0.0059 token goes, 0.1185 stays.
  std::vector<float> v = {2, 0, -3};
  hf::eta(v, 0.1, aten_float_math());
  EXPECT_EQ(v, (std::vector<float>{2, 0, -kInf}));
}

TEST(PlainHf, TypicalKeepsTheTokensNearestTheEntropyUpToTheMass) {
  // p = 0.6, 0.3, 0.1: H = 0.8979; |-ln p - H| = 0.387, 0.306, 1.405, so the order is 1, 0, 2 and
  // the cumulative mass 0.3, 0.9: mass 0.5 is first reached at token 0, which stays with token 1.
  std::vector<float> v = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  hf::typical(v, 0.5, aten_float_math());
  EXPECT_EQ(kept(v), 2);
  EXPECT_EQ(v[2], -kInf);
}

}  // namespace
}  // namespace genrepro::sampling
