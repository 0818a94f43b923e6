// The chain and its three presets: which stages run in which order, the kept set after each, the
// final distribution and the draw, the history accepted between rows, and the refusals. The
// worked examples are docs/sampling.md's (also held to the engine's torch chains in
// tests/unit/engine/framework_sampler_test.cpp).
#include "sampling/presets.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "params/framework_params.hpp"
#include "params/portable_rng.hpp"
#include "sampling/aten_float.hpp"
#include "sampling/llama_cpp_chain.hpp"
#include "sampling/llama_cpp_stages.hpp"
#include "util/errors.hpp"

namespace genrepro::sampling {
namespace {

// Hand-computed values to 4-6 digits against float32 arithmetic.
constexpr double kHandTolerance = 1e-4;

SamplingParams params(Framework f, DecodeMode mode = DecodeMode::sample, uint64_t seed = 1) {
  SamplingParams s;
  s.mode = mode;
  resolve_framework(s, f);
  s.seed = seed;
  return s;
}

std::vector<std::pair<std::string, size_t>> kept_of(const ChainStep& step) {
  std::vector<std::pair<std::string, size_t>> out;
  for (const StageOutcome& o : step.stages) out.emplace_back(o.stage, o.kept.size());
  return out;
}

using Kept = std::vector<std::pair<std::string, size_t>>;

TEST(PlainChain, TheSameValuesKeepOneTokenInHuggingFaceAndTwoInLlamaCpp) {
  // docs/sampling.md, "Same values, different candidate sets": [3, 2, 2, 1, 0], T 0.5, top_k 2,
  // top_p 0.9, min_p 0.2.
  const std::vector<float> logits = {3, 2, 2, 1, 0};
  for (Framework f : {Framework::hf, Framework::llama_cpp}) {
    SamplingParams s = params(f);
    s.temperature = 0.5;
    s.top_k = 2;
    s.top_p = 0.9;
    s.controls.min_p = 0.2;
    Chain chain = make_chain(s, {{4}, -1});
    const ChainStep step = chain.step(logits);
    if (f == Framework::hf) {
      EXPECT_EQ(kept_of(step), (Kept{{"temperature", 5}, {"top_k", 3}, {"top_p", 3}, {"min_p", 1}}));
      ASSERT_EQ(step.final.size(), 1u);
      EXPECT_EQ(step.pick->token, 0);
      EXPECT_FALSE(step.pick->margin);  // one token: nothing else could be drawn
    } else {
      EXPECT_EQ(kept_of(step), (Kept{{"top_k", 2}, {"top_p", 2}, {"min_p", 2}, {"temperature", 2}}));
      ASSERT_EQ(step.final.size(), 2u);
      EXPECT_EQ(step.final[0].id, 0);
      EXPECT_NEAR(step.final[0].p, 0.8808, kHandTolerance);
      EXPECT_NEAR(step.final[1].p, 0.1192, kHandTolerance);
      ASSERT_TRUE(step.pick->margin);
      EXPECT_EQ(step.pick->margin->rule, "inverse_cdf");
    }
  }
}

TEST(PlainChain, ArticlePresetRunsSamplerOrderAndGreedyRunsNothing) {
  SamplingParams s = params(Framework::article);
  s.top_p = 0.7;
  s.sampler_order = {SamplerStage::top_p, SamplerStage::temperature};
  const std::vector<float> logits = {std::log(0.1f), std::log(0.2f), std::log(0.3f), std::log(0.4f)};
  const ChainStep step = make_chain(s, {}).step(logits);
  EXPECT_EQ(kept_of(step), (Kept{{"top_p", 2}, {"temperature", 2}}));
  ASSERT_EQ(step.final.size(), 2u);
  EXPECT_EQ(step.final[0].id, 3);
  EXPECT_NEAR(step.final[0].p, 0.571429, 1e-6);  // llama.cpp's test_top_p case
  EXPECT_NEAR(step.final[1].p, 0.428571, 1e-6);
  EXPECT_EQ(step.stages[0].kept, (std::vector<int32_t>{2, 3}));

  const ChainStep greedy = make_chain(params(Framework::article, DecodeMode::greedy), {}).step(logits);
  EXPECT_TRUE(greedy.stages.empty());
  EXPECT_EQ(greedy.pick->token, 3);
  ASSERT_EQ(greedy.final.size(), 1u);
  EXPECT_EQ(greedy.final[0].p, 1.0f);
  SamplingParams zero = params(Framework::article);
  zero.temperature = 0;  // temperature 0 is greedy, as in the engine's loop
  EXPECT_EQ(make_chain(zero, {}).step(logits).pick->token, 3);
}

TEST(PlainChain, TheRaceDrawsWhatThePortableMultinomialDrawsFromTheSameSeed) {
  SamplingParams s = params(Framework::article, DecodeMode::sample, 43);
  const std::vector<float> logits = {0.5f, 1.5f, -0.25f, 1.0f, 0.0f};
  Chain chain = make_chain(s, {});
  PortableMultinomial race(43);
  const std::vector<float> probs = aten::softmax(logits);
  for (int draw = 0; draw < 50; ++draw) {
    const ChainStep step = chain.step(logits);
    EXPECT_EQ(step.pick->token, race.sample(probs.data(), probs.size())) << "draw " << draw;
  }
  // rng torch and rng portable are the same race.
  s.rng = Rng::portable;
  Chain portable = make_chain(s, {});
  Chain torch_rng = make_chain(params(Framework::article, DecodeMode::sample, 43), {});
  for (int draw = 0; draw < 20; ++draw) EXPECT_EQ(portable.step(logits).pick->token, torch_rng.step(logits).pick->token);
}

TEST(PlainChain, NotPickingConsumesNoDraw) {
  const std::vector<float> logits = {0.5f, 1.5f, -0.25f, 1.0f};
  for (Framework f : {Framework::article, Framework::llama_cpp}) {
    Chain a = make_chain(params(f, DecodeMode::sample, 9), {});
    Chain b = make_chain(params(f, DecodeMode::sample, 9), {});
    EXPECT_FALSE(a.step(logits, /*pick=*/false).pick);
    EXPECT_EQ(a.step(logits).pick->token, b.step(logits).pick->token) << to_string(f);
  }
}

TEST(PlainChain, HuggingFaceGreedyPicksTheArgmaxAfterItsProcessors) {
  SamplingParams s = params(Framework::hf, DecodeMode::greedy);
  s.controls.repetition_penalty = 2.0;
  const std::vector<float> logits = {3.0f, 2.0f, 0.5f};
  Chain chain = make_chain(s, {{0}, -1});
  const ChainStep step = chain.step(logits);
  EXPECT_EQ(kept_of(step), (Kept{{"repetition_penalty", 3}}));
  EXPECT_EQ(step.pick->token, 1);  // 3 / 2 = 1.5 < 2
}

TEST(PlainChain, EachPickJoinsTheHistoryTheNextRowReads) {
  // Hugging Face's no_repeat_ngram_size 2 after the history [1, 2, 1]: row 0 cannot pick 2 and
  // picks 3 (the only other token, greedy); the history is then [1, 2, 1, 3], so row 1 (the same
  // logits) may pick 2 again. Without accept() the history stays [1, 2, 1] and 2 stays banned.
  SamplingParams s = params(Framework::hf, DecodeMode::greedy);
  s.controls.no_repeat_ngram_size = 2;
  const std::vector<float> logits = {-9.0f, -9.0f, 5.0f, 4.0f};
  Chain chain = make_chain(s, {{1, 2, 1}, -1});
  const ChainStep first = chain.step(logits);
  EXPECT_EQ(first.pick->token, 3);
  chain.accept(first.pick->token);
  EXPECT_EQ(chain.history(), (std::vector<int64_t>{1, 2, 1, 3}));
  EXPECT_EQ(chain.step(logits).pick->token, 2);
  Chain fixed = make_chain(s, {{1, 2, 1}, -1});
  fixed.step(logits);
  EXPECT_EQ(fixed.step(logits).pick->token, 3);
}

TEST(PlainChain, MinNewTokensCountsFromTheEndOfTheGivenHistory) {
  SamplingParams s = params(Framework::hf, DecodeMode::greedy);
  s.controls.min_new_tokens = 1;
  const std::vector<float> logits = {0.0f, 0.0f, 5.0f};
  Chain chain = make_chain(s, {{0, 1}, /*eos_token_id=*/2});
  const ChainStep first = chain.step(logits);
  EXPECT_EQ(first.pick->token, 0);  // EOS masked: no new token yet
  chain.accept(first.pick->token);
  EXPECT_EQ(chain.step(logits).pick->token, 2);
}

TEST(PlainChain, LlamaCppPenaltiesWindowFollowsAcceptedTokensAsPenaltyWindowDoes) {
  const std::vector<int64_t> history = {3, 1, 3, 3, 0, 2, 1, 3};
  for (int64_t last_n : {-1, 1, 3, 5, 64}) {
    PenaltiesStage stage(last_n, 1.3f, 0.5f, 0.25f);
    for (int64_t t : history) stage.accept(t);
    const float logits[] = {1.0f, -2.0f, 0.5f, 3.0f, 0.0f};
    Candidates by_accept(logits, 5), by_window(logits, 5);
    stage.apply(by_accept, {history, 0, -1});
    llama_cpp::penalties(by_window, llama_cpp::penalty_window(history, last_n), 1.3f, 0.5f, 0.25f);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(by_accept.data[i].logit, by_window.data[i].logit) << "last_n " << last_n << " token " << i;
  }
}

TEST(PlainChain, LlamaCppTemperatureZeroKeepsTheFirstMaximumAndStillDraws) {
  SamplingParams s = params(Framework::llama_cpp, DecodeMode::greedy, 42);
  EXPECT_EQ(s.temperature, 0);  // llama.cpp's greedy preset
  // Only the temperature sampler, so the array is still in id order (top-k's sort would leave the
  // two 3s in std::partial_sort's order).
  s.top_k = 0;
  s.top_p = 1;
  s.controls.min_p = 0;
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 0.0f};
  const ChainStep step = make_chain(s, {}).step(logits);
  EXPECT_EQ(kept_of(step), (Kept{{"temperature", 1}}));
  EXPECT_EQ(step.pick->token, 1);
}

TEST(PlainChain, AllMaskedIsANumericsErrorNamingTheStage) {
  SamplingParams s = params(Framework::hf);
  s.controls.suppress_tokens = {0, 1, 2};
  try {
    make_chain(s, {{0}, -1}).step({1.0f, 2.0f, 3.0f});
    FAIL() << "no error";
  } catch (const NumericsError& e) {
    EXPECT_NE(std::string(e.what()).find("no token is left to pick after the suppress_tokens stage"), std::string::npos) << e.what();
  }
}

TEST(PlainChain, OverflowingTemperatureIsRefusedBeforeTheDraw) {
  SamplingParams s = params(Framework::article);
  s.temperature = 1e-30;  // the smallest allowed: 1e9 / 1e-30 leaves float32's range
  try {
    make_chain(s, {}).step({1e9f, 0.0f});
    FAIL() << "no error";
  } catch (const NumericsError& e) {
    EXPECT_NE(std::string(e.what()).find("the distribution to draw from holds NaN or infinity"), std::string::npos) << e.what();
  }
}

TEST(PlainChain, ControlIdsOutsideTheVocabularyAreNamed) {
  FrameworkControls c;
  c.bad_words_ids = {{1, 2}, {3, 7}};
  EXPECT_EQ(control_id_outside(c, 8), std::nullopt);
  EXPECT_EQ(control_id_outside(c, 5), "bad_words_ids holds token id 7");
}

}  // namespace
}  // namespace genrepro::sampling
