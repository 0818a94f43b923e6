// The article chain's stages on plain float32 rows, on 3-5-token distributions checked by hand
// (llama.cpp's test-sampling.cpp style), the worked example in both orders, and where the
// article's and Hugging Face's top-p rules part in float32: the cases of
// tests/unit/engine/samplers_test.cpp, here without libtorch.
#include "sampling/article_rules.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "sampling/aten_float.hpp"

namespace genrepro::sampling {
namespace {

// Hand-computed probabilities are written to 6-7 significant digits and the code computes in
// float32 (about 6e-8 relative); 1e-6 covers both and would still catch any wrong kept set.
constexpr double kHandTolerance = 1e-6;
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> log_of(std::vector<float> probs) {
  for (float& p : probs) p = std::log(p);
  return probs;
}

int kept(const std::vector<float>& logits) {
  int n = 0;
  for (float v : logits) n += v > -kInf ? 1 : 0;
  return n;
}

void expect_probs(const std::vector<float>& logits, const std::vector<double>& expected) {
  const std::vector<float> got = aten::softmax(logits);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], kHandTolerance) << "token " << i;
}

TEST(PlainTemperature, DividesByTAndZeroKeepsTheFirstArgmax) {
  std::vector<float> v = {3, 2, 1};
  temperature_rule(v, 0.5);
  EXPECT_EQ(v, (std::vector<float>{6, 4, 2}));
  std::vector<float> w = {1, 5, 2, 5};
  temperature_rule(w, 0);
  EXPECT_EQ(w, (std::vector<float>{-kInf, 5, -kInf, -kInf}));
}

TEST(PlainTemperature, DividesByTheFloatOfT) {
  // ATen casts the double scalar to float32 first: 1 / float(0.1) is not float(1 / 0.1) = 10.
  std::vector<float> v = {1.0f};
  temperature_rule(v, 0.1);
  EXPECT_EQ(v[0], 1.0f / 0.1f);
}

TEST(PlainTopK, KeepsTheKLargestWithTiesAtTheBoundary) {
  std::vector<float> v = {1, 4, 2, 3};
  top_k_rule(v, 2);
  EXPECT_EQ(v, (std::vector<float>{-kInf, 4, -kInf, 3}));
  expect_probs(v, {0, 0.7310586, 0, 0.2689414});
  std::vector<float> ties = {1, 3, 3, 2};
  top_k_rule(ties, 1);
  EXPECT_EQ(kept(ties), 2);  // Hugging Face's TopKLogitsWarper keeps every token tied with the k-th
  std::vector<float> off = {1, 4, 2, 3};
  top_k_rule(off, 0);
  top_k_rule(off, 4);
  EXPECT_EQ(off, (std::vector<float>{1, 4, 2, 3}));
}

TEST(PlainTopPArticle, LlamaCppExample) {
  // test_top_p({0.1, 0.2, 0.3, 0.4}, {0.571429, 0.428571}, 0.7): cumulative 0.4, 0.7 -> 0.3 reaches p and stays.
  std::vector<float> v = log_of({0.1f, 0.2f, 0.3f, 0.4f});
  top_p_article_rule(v, 0.7, aten_float_math());
  EXPECT_EQ(kept(v), 2);
  expect_probs(v, {0, 0, 0.428571, 0.571429});
}

TEST(PlainTopPArticle, TheTokenThatCrossesPStays) {
  std::vector<float> v = log_of({0.4f, 0.3f, 0.2f, 0.1f});
  top_p_article_rule(v, 0.5, aten_float_math());
  EXPECT_EQ(kept(v), 2);
  std::vector<float> w = log_of({0.4f, 0.3f, 0.2f, 0.1f});
  top_p_article_rule(w, 0.4, aten_float_math());  // the top token's 0.4 already satisfies >= p
  EXPECT_EQ(kept(w), 1);
}

TEST(PlainTopPArticle, OneRemovesNothingEvenWhenFloatCumsumReaches1Early) {
  std::vector<float> v = {20, 0, 0};
  EXPECT_EQ(aten::softmax(v)[0], 1.0f);  // the literal rule at p = 1 would keep 1 token
  top_p_article_rule(v, 1.0, aten_float_math());
  EXPECT_EQ(kept(v), 3);
}

TEST(PlainTopP, TiesKeepTheFirstIndexInTheArticleAndTheLastInHuggingFace) {
  std::vector<float> article = {1, 1, 0}, hf = {1, 1, 0};
  top_p_article_rule(article, 0.4, aten_float_math());
  top_p_hf_rule(hf, 0.4, aten_float_math());
  EXPECT_EQ(article, (std::vector<float>{1, -kInf, -kInf}));
  EXPECT_EQ(hf, (std::vector<float>{-kInf, 1, -kInf}));
}

TEST(PlainTopP, TheRulesPartInFloat32AtTheBoundary) {
  // docs/sampling.md: the exact top probability is 0.58499992 < p, float32 softmax rounds it to
  // float(0.585), so the article's cumulative >= p holds at once; HF sums the rest from below.
  std::vector<float> article = {1.5f, -0.1f, 2.1f, -0.9f}, hf = article;
  top_p_article_rule(article, 0.585, aten_float_math());
  top_p_hf_rule(hf, 0.585, aten_float_math());
  EXPECT_EQ(kept(article), 1);
  EXPECT_EQ(kept(hf), 2);
}

TEST(PlainChainOrder, WorkedExampleInBothOrders) {
  // logits [3, 2, 1], top-p 0.8, T 0.5. Temperature first: [6, 4, 2] -> 0.8668 alone reaches 0.8.
  std::vector<float> first = {3, 2, 1};
  temperature_rule(first, 0.5);
  top_p_article_rule(first, 0.8, aten_float_math());
  EXPECT_EQ(kept(first), 1);
  // Temperature last: top-p on [3, 2, 1] keeps 2 (0.6652, 0.9100), then / 0.5.
  std::vector<float> last = {3, 2, 1};
  top_p_article_rule(last, 0.8, aten_float_math());
  temperature_rule(last, 0.5);
  EXPECT_EQ(kept(last), 2);
  expect_probs(last, {0.8807971, 0.1192029, 0});
}

TEST(PlainSortedOrder, EqualValuesKeepIndexOrderBothWays) {
  EXPECT_EQ(sorted_order({1, 3, 1, 3}, true), (std::vector<size_t>{1, 3, 0, 2}));
  EXPECT_EQ(sorted_order({1, 3, 1, 3}, false), (std::vector<size_t>{0, 2, 1, 3}));
}

}  // namespace
}  // namespace genrepro::sampling
