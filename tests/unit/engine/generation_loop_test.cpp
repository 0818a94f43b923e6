// The loop with fake logits sources: stopping (EOS, cap, context), the first-prediction-only run,
// greedy limits of sampling, seeds, and the per-step record checked by hand.
#include "engine/generation_loop.hpp"

#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "engine/torch_row_math.hpp"

namespace genrepro {
namespace {

// Hand-computed probabilities to 7 significant digits against float32 softmax: 1e-6 (see samplers_test).
constexpr double kHandTolerance = 1e-6;

// Logits from a function of the sequence so far; records the longest sequence it was fed.
class FakeSource : public LogitsSource {
 public:
  using Fn = std::function<std::vector<float>(const std::vector<int64_t>&)>;
  FakeSource(Fn fn, int64_t context) : fn_(std::move(fn)), context_(context) {}
  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    longest_fed = std::max<int64_t>(longest_fed, static_cast<int64_t>(ids.size()));
    ++calls;
    return fn_(ids);
  }
  int64_t context_size() const override { return context_; }
  const StepMath& step_math() const override { return torch_step_math(); }
  int64_t longest_fed = 0;
  int calls = 0;

 private:
  Fn fn_;
  int64_t context_;
};

constexpr int64_t kVocab = 100;
constexpr int64_t kEos = 99;  // the fake model's EOS id, passed in as a model config would

// A fake "language model": V = 100 distinct logits spaced 0.05 apart whose order depends on the
// sequence, so a sampled run at T = 1 has a real spread and its argmax changes every step.
std::vector<float> spread_logits(const std::vector<int64_t>& ids) {
  const int64_t shift = (ids.back() * 31 + static_cast<int64_t>(ids.size()) * 17) % kVocab;
  std::vector<float> logits(kVocab);
  for (int64_t i = 0; i < kVocab; ++i) logits[i] = -0.05f * static_cast<float>((i * 7 + shift) % kVocab);
  logits[kEos] = -10;  // EOS unlikely unless a test wants it
  return logits;
}

std::string text_of(int64_t id) { return "<" + std::to_string(id) + ">"; }

RunParams sampled(double temperature, uint64_t seed, int64_t max_new_tokens = 20) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.temperature = temperature;
  p.sampling.seed = seed;
  p.max_new_tokens = max_new_tokens;
  return p;
}

RunParams greedy(int64_t max_new_tokens = 20) {
  RunParams p;
  p.max_new_tokens = max_new_tokens;
  return p;
}

GenerationResult run(const RunParams& params, FakeSource::Fn fn = spread_logits, int64_t context = 1024,
                     std::vector<int64_t> prompt = {5, 6}) {
  FakeSource source(std::move(fn), context);
  return run_generation(source, prompt, params, kEos, text_of);
}

TEST(GenerationLoop, GreedyFollowsTheArgmaxAndStopsAtTheCap) {
  // Each step's argmax is the previous token + 1: 7, 8, 9, ...
  const auto next_is_plus_one = [](const std::vector<int64_t>& ids) {
    std::vector<float> logits(kVocab, 0);
    logits[(ids.back() + 1) % kVocab] = 1;
    return logits;
  };
  const auto r = run(greedy(5), next_is_plus_one);
  EXPECT_EQ(r.output_ids, (std::vector<int64_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(r.prompt_ids, (std::vector<int64_t>{5, 6}));
  EXPECT_EQ(r.stop_reason, StopReason::max_new_tokens);
  EXPECT_EQ(r.stop_step, 5);
  ASSERT_EQ(r.steps.size(), 5u);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.steps[i].step, i);
    EXPECT_EQ(r.steps[i].token_id, r.output_ids[i]);
    EXPECT_EQ(r.steps[i].token_text, text_of(r.output_ids[i]));
    EXPECT_EQ(r.steps[i].kept, 1);
  }
}

TEST(GenerationLoop, EosAsArgmaxStopsEarlyAtItsPosition) {
  // EOS becomes the argmax once the sequence holds 2 + 3 tokens: the 4th new token is EOS.
  const auto eos_at_fourth = [](const std::vector<int64_t>& ids) {
    std::vector<float> logits(kVocab, 0);
    logits[ids.size() == 5 ? kEos : 10] = 2;
    return logits;
  };
  const auto r = run(greedy(50), eos_at_fourth);
  EXPECT_EQ(r.stop_reason, StopReason::eos);
  EXPECT_EQ(r.stop_step, 4);
  EXPECT_EQ(r.output_ids, (std::vector<int64_t>{10, 10, 10, kEos}));  // EOS included
  EXPECT_EQ(r.steps.size(), 4u);

  RunParams keep_going = greedy(6);
  keep_going.stop_at_eos = false;
  const auto r2 = run(keep_going, eos_at_fourth);
  EXPECT_EQ(r2.stop_reason, StopReason::max_new_tokens);
  EXPECT_EQ(r2.output_ids.size(), 6u);
}

TEST(GenerationLoop, EosAsTheLastAllowedTokenIsStillEos) {
  const auto always_eos = [](const std::vector<int64_t>&) {
    std::vector<float> logits(kVocab, 0);
    logits[kEos] = 1;
    return logits;
  };
  const auto r = run(greedy(1), always_eos);
  EXPECT_EQ(r.stop_reason, StopReason::eos);
  EXPECT_EQ(r.stop_step, 1);
}

TEST(GenerationLoop, ContextFullStopsCleanly) {
  FakeSource source(spread_logits, /*context=*/8);
  const auto r = run_generation(source, {1, 2, 3, 4, 5}, greedy(50), kEos, text_of);
  EXPECT_EQ(r.stop_reason, StopReason::context_full);
  EXPECT_EQ(r.stop_step, 3);
  EXPECT_EQ(r.output_ids.size(), 3u);
  EXPECT_EQ(source.longest_fed, 7);  // never more than the context; the 8th token is never fed
}

TEST(GenerationLoop, CapWinsWhenItCoincidesWithAFullContext) {
  FakeSource source(spread_logits, 8);
  const auto r = run_generation(source, {1, 2, 3, 4, 5}, greedy(3), kEos, text_of);
  EXPECT_EQ(r.stop_reason, StopReason::max_new_tokens);
  EXPECT_EQ(r.stop_step, 3);
}

TEST(GenerationLoop, MaxNewTokensZeroRecordsOnlyTheFirstPrediction) {
  FakeSource source([](const std::vector<int64_t>&) { return std::vector<float>{3, 2, 1}; }, 1024);
  const auto r = run_generation(source, {0}, greedy(0), kEos, text_of);
  EXPECT_EQ(source.calls, 1);
  EXPECT_TRUE(r.output_ids.empty());
  EXPECT_EQ(r.stop_reason, StopReason::max_new_tokens);
  EXPECT_EQ(r.stop_step, 0);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_FALSE(r.steps[0].token_id.has_value());
  EXPECT_EQ(r.steps[0].step, 0);
  ASSERT_EQ(r.steps[0].top.size(), 3u);
  EXPECT_EQ(r.steps[0].top[0].id, 0);
  EXPECT_NEAR(r.steps[0].top[0].prob_scaled, 0.6652410, kHandTolerance);
}

TEST(GenerationLoop, TinyTemperatureSamplingEqualsGreedyOverTheWholeRun) {
  // Logit gaps are >= 0.05, so at T = 0.001 the runner-up has e^-50 of the top's weight: the draw
  // is the argmax unless sampling and greedy disagree somewhere.
  const auto g = run(greedy(30));
  for (uint64_t seed : {41u, 42u, 43u}) {
    for (Rng rng : kRngs) {
      RunParams p = sampled(0.001, seed, 30);
      p.sampling.rng = rng;
      EXPECT_EQ(run(p).output_ids, g.output_ids) << "seed " << seed << " rng " << to_string(rng);
    }
  }
}

TEST(GenerationLoop, TopK1EqualsGreedy) {
  const auto g = run(greedy(30));
  for (uint64_t seed : {1u, 2u, 3u}) {
    RunParams p = sampled(1.0, seed, 30);
    p.sampling.top_k = 1;
    const auto r = run(p);
    EXPECT_EQ(r.output_ids, g.output_ids) << "seed " << seed;
    EXPECT_EQ(r.steps[0].kept, 1);
  }
}

TEST(GenerationLoop, TemperatureZeroInSampleModeIsGreedy) {
  EXPECT_EQ(run(sampled(0, 7, 30)).output_ids, run(greedy(30)).output_ids);
}

TEST(GenerationLoop, ASeedReproducesAndDifferentSeedsDiffer) {
  const auto a = run(sampled(1.0, 42));
  const auto b = run(sampled(1.0, 42));
  EXPECT_EQ(a.output_ids, b.output_ids);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].prob, b.steps[i].prob);
    EXPECT_EQ(a.steps[i].entropy, b.steps[i].entropy);
  }
  const auto c = run(sampled(1.0, 41));
  const auto d = run(sampled(1.0, 43));
  EXPECT_NE(a.output_ids, c.output_ids);
  EXPECT_NE(a.output_ids, d.output_ids);
  EXPECT_NE(c.output_ids, d.output_ids);
  EXPECT_NE(a.output_ids, run(greedy()).output_ids);  // sampling at T = 1 really samples here
}

TEST(GenerationLoop, PortableRngPicksWhatTorchPicksOverARun) {
  for (uint64_t seed : {0u, 41u, 42u, 43u, 1234567u}) {
    RunParams torch_rng = sampled(1.0, seed, 40);
    torch_rng.sampling.top_p = 0.9;
    RunParams portable = torch_rng;
    portable.sampling.rng = Rng::portable;
    EXPECT_EQ(run(torch_rng).output_ids, run(portable).output_ids) << "seed " << seed;
  }
}

TEST(GenerationLoop, TopP1RemovesNothing) {
  RunParams p = sampled(1.0, 42, 5);
  p.sampling.top_p = 1.0;
  for (const auto& step : run(p).steps) EXPECT_EQ(step.kept, kVocab);
}

TEST(GenerationLoop, StepRecordOfAGreedyStepByHand) {
  // logits [3, 2, 1]: softmax 0.6652410, 0.2447285, 0.0900306; entropy 0.8323956 nats.
  FakeSource source([](const std::vector<int64_t>&) { return std::vector<float>{3, 2, 1}; }, 1024);
  RunParams p = greedy(1);
  p.top_candidates = 2;
  const auto r = run_generation(source, {0}, p, kEos, text_of);
  const StepRecord& s = r.steps.at(0);
  EXPECT_EQ(s.token_id, 0);
  EXPECT_EQ(s.token_text, "<0>");
  EXPECT_NEAR(s.prob, 0.6652410, kHandTolerance);
  EXPECT_NEAR(s.prob_t1, 0.6652410, kHandTolerance);
  EXPECT_EQ(s.kept, 1);
  ASSERT_EQ(s.top.size(), 2u);
  EXPECT_EQ(s.top[1].id, 1);
  EXPECT_EQ(s.top[1].text, "<1>");
  EXPECT_NEAR(s.top[1].prob, 0.2447285, kHandTolerance);
  EXPECT_NEAR(s.rest_mass, 0.0900306, kHandTolerance);
  EXPECT_NEAR(s.margin, 0.6652410 - 0.2447285, kHandTolerance);
  EXPECT_NEAR(s.logit_margin, 1.0, kHandTolerance);
  EXPECT_NEAR(s.entropy, 0.8323956, kHandTolerance);
}

TEST(GenerationLoop, StepRecordOfTheWorkedExampleInBothOrders) {
  FakeSource source([](const std::vector<int64_t>&) { return std::vector<float>{3, 2, 1}; }, 1024);
  RunParams p = sampled(0.5, 42, 1);
  p.sampling.top_p = 0.8;
  p.top_candidates = 3;
  // temperature first: softmax([6, 4, 2]) = 0.8668133, 0.1173104, 0.0158762; the top alone reaches 0.8.
  const auto first = run_generation(source, {0}, p, kEos, text_of).steps.at(0);
  EXPECT_EQ(first.kept, 1);
  EXPECT_EQ(first.token_id, 0);
  EXPECT_NEAR(first.prob, 1.0, kHandTolerance);
  EXPECT_NEAR(first.prob_t1, 0.6652410, kHandTolerance);
  EXPECT_NEAR(first.entropy, 0.0, kHandTolerance);
  EXPECT_EQ(first.top[1].prob, 0.0);
  EXPECT_NEAR(first.top[1].prob_scaled, 0.1173104, kHandTolerance);
  EXPECT_NEAR(first.margin, 0.8668133 - 0.1173104, kHandTolerance);
  EXPECT_NEAR(first.rest_mass, 0.0, kHandTolerance);
  // temperature last (llama.cpp's order): two kept, e^2/(e^2+1) = 0.8807971 and 0.1192029.
  p.sampling.sampler_order = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
  const auto last = run_generation(source, {0}, p, kEos, text_of).steps.at(0);
  EXPECT_EQ(last.kept, 2);
  EXPECT_NEAR(last.top[0].prob, 0.8807971, kHandTolerance);
  EXPECT_NEAR(last.top[1].prob, 0.1192029, kHandTolerance);
  EXPECT_EQ(last.top[2].prob, 0.0);
  EXPECT_NEAR(last.entropy, -(0.8807971 * std::log(0.8807971) + 0.1192029 * std::log(0.1192029)), kHandTolerance);
}

TEST(GenerationLoop, BadInputIsRejectedBeforeAnyStep) {
  FakeSource source(spread_logits, 4);
  try {
    run_generation(source, {1, 2, 3, 4, 5}, greedy(), kEos, text_of);
    FAIL() << "no throw";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "the prompt has 5 tokens; allowed: at most the model's context (n_positions = 4); "
                           "shorten the prompt");
  }
  EXPECT_THROW(run_generation(source, {}, greedy(), kEos, text_of), UsageError);
  RunParams bad = sampled(-1, 0);
  EXPECT_THROW(run_generation(source, {1}, bad, kEos, text_of), SpecError);
  EXPECT_EQ(source.calls, 0);
}

}  // namespace
}  // namespace genrepro
