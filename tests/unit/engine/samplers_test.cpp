// Samplers on 3-5-token distributions checked by hand (llama.cpp's test-sampling.cpp style), the
// worked example of docs/sampling.md in both orders, and where the article's and Hugging Face's top-p
// rules part in float32 (docs/sampling.md).
#include "support/torch_chains/samplers.hpp"

#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>


namespace genrepro {
namespace {

// Hand-computed probabilities are written to 6-7 significant digits and the code computes in
// float32 (about 6e-8 relative); 1e-6 covers both and would still catch any wrong kept set.
constexpr double kHandTolerance = 1e-6;
constexpr float kInf = std::numeric_limits<float>::infinity();

torch::Tensor t(std::vector<float> v) { return torch::tensor(v, torch::kFloat32); }

std::vector<double> probs_of(const torch::Tensor& logits) {
  const auto p = torch::softmax(logits, 0).to(torch::kFloat64).contiguous();
  return std::vector<double>(p.data_ptr<double>(), p.data_ptr<double>() + p.numel());
}

int64_t kept(const torch::Tensor& logits) { return torch::isfinite(logits).sum().item<int64_t>(); }

void expect_probs(const torch::Tensor& logits, const std::vector<double>& expected) {
  const auto got = probs_of(logits);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], kHandTolerance) << "token " << i;
}

torch::Tensor log_of(std::vector<float> probs) { return torch::log(t(probs)); }

// ---- temperature ----

TEST(Temperature, DividesLogitsByT) {
  EXPECT_TRUE(torch::equal(apply_temperature(t({3, 2, 1}), 0.5), t({6, 4, 2})));
  EXPECT_TRUE(torch::equal(apply_temperature(t({3, 2, 1}), 1.0), t({3, 2, 1})));
}

TEST(Temperature, ZeroKeepsOnlyTheArgmaxInsteadOfDividing) {
  const auto out = apply_temperature(t({1, 5, 2}), 0);
  EXPECT_TRUE(torch::equal(out, t({-kInf, 5, -kInf})));
  expect_probs(out, {0, 1, 0});
}

TEST(Temperature, DoesNotReorder) {
  const auto logits = t({0.3f, -1.f, 2.5f, 0.9f});
  for (double temp : {0.1, 0.5, 2.0, 7.0})
    EXPECT_TRUE(torch::equal(std::get<1>(torch::sort(apply_temperature(logits, temp), 0, true)),
                             std::get<1>(torch::sort(logits, 0, true))));
}

// ---- top-k ----

TEST(TopK, KeepsTheKLargest) {
  const auto out = top_k_filter(t({1, 4, 2, 3}), 2);
  EXPECT_TRUE(torch::equal(out, t({-kInf, 4, -kInf, 3})));
  expect_probs(out, {0, 0.7310586, 0, 0.2689414});  // e / (e + 1), 1 / (e + 1)
}

TEST(TopK, ZeroAndAtLeastVocabularyAreOff) {
  const auto logits = t({1, 4, 2, 3});
  EXPECT_TRUE(torch::equal(top_k_filter(logits, 0), logits));
  EXPECT_TRUE(torch::equal(top_k_filter(logits, 4), logits));
  EXPECT_TRUE(torch::equal(top_k_filter(logits, 100), logits));
}

TEST(TopK, TiesAtTheBoundaryStayAsInHuggingFace) {
  EXPECT_EQ(kept(top_k_filter(t({1, 3, 3, 2}), 1)), 2);
}

// ---- the article's top_p_filter ----

TEST(TopPArticle, LlamaCppExample) {
  // test_top_p({0.1, 0.2, 0.3, 0.4}, {0.571429, 0.428571}, 0.7): cumulative 0.4, 0.7 -> 0.3 reaches p and stays.
  expect_probs(top_p_filter(log_of({0.1f, 0.2f, 0.3f, 0.4f}), 0.7), {0, 0, 0.4285714, 0.5714286});
}

TEST(TopPArticle, TheTokenThatCrossesPStays) {
  // cumulative 0.4 < 0.5 <= 0.7: the 0.3 token takes the total across p, so it is kept.
  expect_probs(top_p_filter(log_of({0.4f, 0.3f, 0.2f, 0.1f}), 0.5), {0.5714286, 0.4285714, 0, 0});
  // cumulative 0.4 already reaches p = 0.4 (>=): the top token alone.
  expect_probs(top_p_filter(log_of({0.4f, 0.3f, 0.2f, 0.1f}), 0.4), {1, 0, 0, 0});
  // just above 0.4: the next token is needed.
  EXPECT_EQ(kept(top_p_filter(log_of({0.4f, 0.3f, 0.2f, 0.1f}), 0.41)), 2);
}

TEST(TopPArticle, AlwaysKeepsTheTopToken) {
  expect_probs(top_p_filter(t({0, 3, 1}), 1e-9), {0, 1, 0});
}

TEST(TopPArticle, TiesKeepTheFirstIndexAtTheBoundary) {
  // softmax([1, 1, 0]) = 0.4223188, 0.4223188, 0.1553624. p = 0.4: the first tie already reaches p;
  // torch.sort (stable on short rows) puts index 0 first, so index 0 is the one kept.
  expect_probs(top_p_filter(t({1, 1, 0}), 0.4), {1, 0, 0});
  // p = 0.6: the second tie crosses p and stays.
  expect_probs(top_p_filter(t({1, 1, 0}), 0.6), {0.5, 0.5, 0});
  // ties in the middle: [0, 2, 2, 1] -> 0.3994..., 0.3994..., 0.1470, 0.0541; p = 0.5 keeps both 2s.
  expect_probs(top_p_filter(t({0, 2, 2, 1}), 0.5), {0, 0.5, 0.5, 0});
}

TEST(TopPArticle, OneRemovesNothingEvenWhenFloatCumsumReaches1Early) {
  // softmax([20, 0, 0]) rounds the top token to exactly 1.0f, so the article's code taken literally
  // at p = 1.0 (cumulative >= 1) would drop the other two. p >= 1 is "no top-p": nothing is removed.
  const auto logits = t({20, 0, 0});
  EXPECT_EQ(torch::softmax(logits, 0)[0].item<float>(), 1.0f);
  EXPECT_TRUE(torch::equal(top_p_filter(logits, 1.0), logits));
  EXPECT_EQ((torch::softmax(top_p_filter(logits, 1.0), 0) > 0).sum().item<int64_t>(), 3);
}

TEST(TopPArticle, DoesNotModifyItsInput) {
  const auto logits = t({1, 2, 3});
  top_p_filter(logits, 0.5);
  EXPECT_TRUE(torch::equal(logits, t({1, 2, 3})));
}

// ---- Hugging Face's TopPLogitsWarper and where it parts from the article ----

TEST(TopPHf, AgreesOnTheHandExamples) {
  expect_probs(top_p_filter_hf(log_of({0.1f, 0.2f, 0.3f, 0.4f}), 0.7), {0, 0, 0.4285714, 0.5714286});
  expect_probs(top_p_filter_hf(log_of({0.4f, 0.3f, 0.2f, 0.1f}), 0.5), {0.5714286, 0.4285714, 0, 0});
  expect_probs(top_p_filter_hf(t({0, 3, 1}), 1e-9), {0, 1, 0});
  EXPECT_TRUE(torch::equal(top_p_filter_hf(t({20, 0, 0}), 1.0), t({20, 0, 0})));
}

TEST(TopPHf, PartsFromTheArticleInFloat32AtTheBoundary) {
  // docs/sampling.md: float32 logits [1.5, -0.1, 2.1, -0.9], p = 0.585. In exact arithmetic the top
  // token has probability 0.58499992 < p, so the nucleus needs two tokens. float32 softmax rounds
  // the top probability to 0.58499998 = float(0.585), so the article's `cumulative >= p` already
  // holds at the top token: it keeps 1. HF sums the three smaller ones to 0.41500011 > float(1 - p)
  // = 0.41499999, removes none of the top two: it keeps 2.
  const auto logits = t({1.5f, -0.1f, 2.1f, -0.9f});
  const auto exact = torch::softmax(logits.to(torch::kFloat64), 0);
  EXPECT_LT(exact[2].item<double>(), 0.585);
  EXPECT_EQ(kept(top_p_filter(logits, 0.585)), 1);
  EXPECT_EQ(kept(top_p_filter_hf(logits, 0.585)), 2);
}

TEST(TopPHf, TiesKeepTheLastIndexWhereTheArticleKeepsTheFirst) {
  // Ascending sort puts the tie at index 1 last, so HF keeps index 1; the article keeps index 0.
  expect_probs(top_p_filter_hf(t({1, 1, 0}), 0.4), {0, 1, 0});
  expect_probs(top_p_filter(t({1, 1, 0}), 0.4), {1, 0, 0});
}

TEST(TopPHf, OnVocabularySizedLogitsTheRulesPartByOneBoundaryToken) {
  // docs/sampling.md: near the nucleus boundary of a 50,257-token distribution the tokens weigh
  // ~1e-6, below the float32 rounding of a cumulative sum near 0.95, so the two summation orders
  // can disagree about the boundary token. Fixed pseudo-random logits (std::mt19937, scale 3).
  std::mt19937 engine(3);
  std::normal_distribution<float> normal;
  int parted = 0;
  for (int v = 0; v < 12; ++v) {
    std::vector<float> values(50257);
    for (auto& x : values) x = 3.0f * normal(engine);
    const auto logits = t(values);
    const int64_t article = kept(top_p_filter(logits, 0.95));
    const int64_t hf = kept(top_p_filter_hf(logits, 0.95));
    EXPECT_LE(std::abs(article - hf), 1) << "vector " << v;
    parted += article != hf;
  }
  EXPECT_GE(parted, 1);
}

// ---- the chain ----

SamplingParams worked_example(std::vector<SamplerStage> order) {
  SamplingParams s;
  s.mode = DecodeMode::sample;
  s.temperature = 0.5;
  s.top_p = 0.8;
  s.sampler_order = std::move(order);
  return s;
}

TEST(SamplerChain, WorkedExampleTemperatureFirstKeepsOne) {
  // [3, 2, 1] / 0.5 = [6, 4, 2] -> 0.8668, 0.1173, 0.0159: the top token alone reaches 0.8.
  const auto chain =
      build_sampler_chain(worked_example({SamplerStage::temperature, SamplerStage::top_k, SamplerStage::top_p}));
  const auto out = chain.apply(t({3, 2, 1}));
  EXPECT_EQ(kept(out), 1);
  expect_probs(out, {1, 0, 0});
}

TEST(SamplerChain, WorkedExampleTemperatureLastKeepsTwo) {
  // top-p on [3, 2, 1]: 0.6652, 0.9100 -> two tokens; then / 0.5: softmax([6, 4]) = e^2/(e^2+1), 1/(e^2+1).
  const auto chain =
      build_sampler_chain(worked_example({SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature}));
  const auto out = chain.apply(t({3, 2, 1}));
  EXPECT_EQ(kept(out), 2);
  expect_probs(out, {0.8807971, 0.1192029, 0});
}

TEST(SamplerChain, IsTheNamedOrderAsData) {
  SamplingParams s = worked_example({SamplerStage::top_p, SamplerStage::temperature});
  EXPECT_EQ(build_sampler_chain(s).names(), (std::vector<std::string>{"top_p", "temperature"}));
  s.top_p_rule = TopPRule::hf;
  EXPECT_EQ(build_sampler_chain(s).names(), (std::vector<std::string>{"top_p", "temperature"}));
  s.sampler_order = {SamplerStage::top_k};
  EXPECT_EQ(build_sampler_chain(s).names(), (std::vector<std::string>{"top_k"}));
  s.sampler_order = {};
  EXPECT_TRUE(torch::equal(build_sampler_chain(s).apply(t({3, 2, 1})), t({3, 2, 1})));
}

TEST(SamplerChain, TopPRulePicksTheTopPStage) {
  // The logits on which the two rules part (TopPHf.PartsFromTheArticleInFloat32AtTheBoundary):
  // the chain's top_p stage keeps 1 token under the article's rule and 2 under Hugging Face's.
  SamplingParams s;
  s.mode = DecodeMode::sample;
  s.top_p = 0.585;
  s.sampler_order = {SamplerStage::top_p};
  const auto logits = t({1.5f, -0.1f, 2.1f, -0.9f});
  s.top_p_rule = TopPRule::article;
  EXPECT_EQ(kept(build_sampler_chain(s).apply(logits)), 1);
  s.top_p_rule = TopPRule::hf;
  EXPECT_EQ(kept(build_sampler_chain(s).apply(logits)), 2);
}

TEST(SamplerChain, KeptSetGrowsWithTemperature) {
  // 60 logits falling by 0.15: a long tail, like a language model's first prediction.
  const auto logits = -0.15 * torch::arange(60, torch::kFloat32);
  int64_t previous = 0;
  for (double temp : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    SamplingParams s;
    s.mode = DecodeMode::sample;
    s.temperature = temp;
    s.top_p = 0.9;
    const int64_t n = kept(build_sampler_chain(s).apply(logits));
    EXPECT_GT(n, previous) << "T = " << temp;
    previous = n;
  }
}

}  // namespace
}  // namespace genrepro
