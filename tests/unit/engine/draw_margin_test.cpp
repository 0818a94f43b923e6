// How close a sampled step's draw came to another token (steps[].draw), held to
// references that do not share the race's code:
//  - the exponential race (the chain's race draw for rng torch and portable, Hugging Face's
//    preset, and the reference torch picker of tests/support/torch_chains): torch's own
//    ops on a clone of the generator, q = empty(V).exponential_(1, clone), ratios = p / q, the two
//    best by torch::topk, margin = ln(r1 / r2); the pick is torch::multinomial's on the run's own
//    generator, which therefore advances exactly as before;
//  - llama.cpp's dist: u drawn by a separate std::mt19937 and uniform_real_distribution<double>,
//    the intervals of the cumulative distribution written out by hand.
// Planted near-ties have a known runner-up: with two tokens left it is the other one.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/run_chain.hpp"
#include "params/framework_params.hpp"
#include "params/portable_rng.hpp"
#include "sampling/llama_cpp_chain.hpp"
#include "support/torch_chains/token_picker.hpp"
#include "support/torch_rows.hpp"

namespace genrepro {
namespace {

constexpr int64_t kGpt2Vocab = 50257;

struct TorchRace {
  int64_t winner, runner_up;
  double margin;
};

// torch's race on a clone of `gen`, in torch's ops (aten multinomial's one-sample path).
TorchRace torch_race(const torch::Tensor& probs, const at::Generator& gen) {
  at::Generator clone = gen.clone();
  const torch::Tensor q = torch::empty_like(probs).exponential_(1, clone);
  const torch::Tensor ratios = probs / q;
  const auto [values, ids] = torch::topk(ratios, 2);
  const float r1 = values[0].item<float>(), r2 = values[1].item<float>();
  return {ratios.argmax().item<int64_t>(), ids[1].item<int64_t>(), std::log(static_cast<double>(r1) / static_cast<double>(r2))};
}

// The chain's race draw (sampling/draws.hpp RaceDraw) on probabilities: rng torch and portable
// alike draw from a PortableMultinomial seeded with the run's seed.
RacePick chain_race(PortableMultinomial& race, const torch::Tensor& probs) {
  const torch::Tensor p = probs.contiguous();
  return race.race(p.data_ptr<float>(), static_cast<size_t>(p.numel()));
}

// A GPT-2-sized distribution whose two best tokens, a and b, are a near-tie: p_b = p_a (1 - gap).
torch::Tensor planted_near_tie(int64_t a, int64_t b, double gap, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> tail(0, 1e-6f);
  std::vector<float> p(kGpt2Vocab);
  for (float& x : p) x = tail(rng);
  p[static_cast<size_t>(a)] = 0.3f;
  p[static_cast<size_t>(b)] = static_cast<float>(0.3 * (1 - gap));
  torch::Tensor t = torch::tensor(p);
  return t / t.sum();
}

TEST(DrawMargin, TheChainsRaceRecordsTorchsRaceAndPicksWhatMultinomialPicks) {
  PortableMultinomial race(42);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(42);
  int planted_pair_leads = 0;
  for (int k = 0; k < 30; ++k) {
    const int64_t a = 1000 + k, b = 7 + k;
    const torch::Tensor p = planted_near_tie(a, b, 1e-3, static_cast<uint32_t>(k));
    const TorchRace expected = torch_race(p, gen);
    const int64_t torch_pick = torch::multinomial(p, 1, false, gen).item<int64_t>();
    ASSERT_EQ(torch_pick, expected.winner) << "step " << k;  // the reference agrees with torch itself
    const RacePick got = chain_race(race, p);
    ASSERT_EQ(got.token, torch_pick) << "step " << k;
    ASSERT_TRUE(got.margin.has_value()) << "step " << k;
    EXPECT_EQ(got.margin->runner_up, expected.runner_up) << "step " << k;
    EXPECT_NEAR(got.margin->margin, expected.margin, 1e-12) << "step " << k;
    EXPECT_GE(got.margin->margin, 0);
    // the planted pair holds 97 % of the mass: mostly it is the winner and the runner-up
    planted_pair_leads += (got.token == a && got.margin->runner_up == b) || (got.token == b && got.margin->runner_up == a);
  }
  EXPECT_GE(planted_pair_leads, 20);
}

TEST(DrawMargin, TwoTokensLeftTheRunnerUpIsTheOtherAndTheMarginIsTheirLogRatio) {
  // p = [0, 0.5005, 0, 0.4995]: whichever wins, the other is the runner-up, and the margin is
  // ln((p_w / q_w) / (p_o / q_o)) of torch's two draws for those entries.
  const torch::Tensor p = torch::tensor({0.0f, 0.5005f, 0.0f, 0.4995f});
  for (uint64_t seed : {0ull, 1ull, 41ull, 42ull, 43ull, 12345ull}) {
    {
      at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
      PortableMultinomial race(seed);
      for (int k = 0; k < 20; ++k) {
        at::Generator clone = gen.clone();
        const torch::Tensor q = torch::empty({4}).exponential_(1, clone);
        torch::multinomial(p, 1, false, gen);
        const RacePick got = chain_race(race, p);
        ASSERT_TRUE(got.token == 1 || got.token == 3);
        ASSERT_TRUE(got.margin.has_value());
        const int64_t other = got.token == 1 ? 3 : 1;
        EXPECT_EQ(got.margin->runner_up, other);
        const double rw = static_cast<double>(p[got.token].item<float>() / q[got.token].item<float>());
        const double ro = static_cast<double>(p[other].item<float>() / q[other].item<float>());
        EXPECT_NEAR(got.margin->margin, std::log(rw / ro), 1e-12) << "seed " << seed << " step " << k;
      }
    }
  }
}

TEST(DrawMargin, PortableAndTorchRecordTheSameMarginBits) {
  SamplingParams s;
  s.mode = DecodeMode::sample;
  s.seed = 7;
  s.rng = Rng::torch;
  const auto by_torch = make_token_picker(s);  // the reference: torch's generator, torch's race
  PortableMultinomial portable(7);              // the chain's race
  for (int k = 0; k < 10; ++k) {
    const torch::Tensor p = planted_near_tie(5 * k, 50000 - k, 1e-2, static_cast<uint32_t>(100 + k));
    const RacePick a = by_torch->pick_with_margin(p), b = chain_race(portable, p);
    ASSERT_EQ(a.token, b.token);
    ASSERT_TRUE(a.margin && b.margin);
    EXPECT_EQ(a.margin->runner_up, b.margin->runner_up);
    EXPECT_EQ(a.margin->margin, b.margin->margin);  // bit for bit: the same float32 ratios
  }
}

TEST(DrawMargin, OneDrawableTokenRecordsNoMargin) {
  SamplingParams s;
  s.mode = DecodeMode::sample;
  const float minus_inf = -std::numeric_limits<float>::infinity();
  for (Rng rng : {Rng::torch, Rng::portable}) {
    s.rng = rng;
    const RunStep got = test::torch_run_chain(s, {}, -1).step(test::row_of(torch::tensor({minus_inf, minus_inf, 1.0f})), 0, true);
    EXPECT_EQ(*got.token, 2);
    EXPECT_FALSE(got.draw.has_value());
  }
}

TEST(DrawMargin, HuggingFaceSamplingRecordsTheRaceAndGreedyNothing) {
  SamplingParams s;
  s.framework = Framework::hf;
  s.mode = DecodeMode::sample;
  s.seed = 3;
  const std::vector<int64_t> ids = {1, 2};
  const torch::Tensor logits = torch::tensor({2.0f, 2.001f, -1.0f, 0.5f});
  const RunStep step = test::torch_run_chain(s, ids, 0).step(test::row_of(logits), 0, true);
  ASSERT_TRUE(step.draw.has_value());
  EXPECT_EQ(step.draw->rule, DrawRule::exponential_race);
  EXPECT_NE(step.draw->runner_up, *step.token);
  // the same race on the same probabilities from a generator seeded alike
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const TorchRace expected = torch_race(test::tensor_of(step.final_probs), gen);
  EXPECT_EQ(*step.token, expected.winner);
  EXPECT_EQ(step.draw->runner_up, expected.runner_up);
  EXPECT_NEAR(step.draw->margin, expected.margin, 1e-12);
  s.mode = DecodeMode::greedy;
  EXPECT_FALSE(test::torch_run_chain(s, ids, 0).step(test::row_of(logits), 0, true).draw.has_value());
}

// llama.cpp's dist by hand: u from its own engine, the intervals of the running sum.
TEST(DrawMargin, LlamaCppDistRecordsTheDistanceToTheNearestEdgeAndTheTokenAcrossIt) {
  // logits 0, -inf, 0, 0: weights expf(0) = 1 exactly, token 1 none; the running sum before each
  // token is 0, 1, 1, 2 and ends at 3, and dist picks the first token whose sum reaches 3 u.
  const float minus_inf = -std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {0.0f, minus_inf, 0.0f, 0.0f};
  const std::vector<double> edges = {0.0, 1.0, 1.0, 2.0, 3.0};
  for (uint32_t seed : {0u, 1u, 2u, 3u, 42u, 1234u}) {
    llama_cpp::Dist dist(seed);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int k = 0; k < 25; ++k) {
      llama_cpp::Candidates cur(logits.data(), logits.size());
      const auto edge = dist.apply(cur);
      const double target = 3.0 * uniform(rng);
      size_t chosen = 0;
      while (!(edges[chosen + 1] >= target)) ++chosen;
      ASSERT_EQ(cur.selected, static_cast<int64_t>(chosen));
      ASSERT_TRUE(edge.has_value());
      const double below = (target - edges[chosen]) / 3.0, above = (edges[chosen + 1] - target) / 3.0;
      // token 1 has no width: across the lower edge of 2 is token 0, across the upper of 0 is 2
      const int32_t lower_token = chosen == 2 ? 0 : chosen == 3 ? 2 : -1;
      const int32_t upper_token = chosen == 0 ? 2 : chosen == 2 ? 3 : -1;
      const bool lower = lower_token >= 0 && (upper_token < 0 || below <= above);  // a tie: the lower edge
      EXPECT_EQ(edge->runner_up, lower ? lower_token : upper_token) << "seed " << seed << " draw " << k << " target " << target;
      EXPECT_NEAR(edge->distance, lower ? below : above, 1e-15) << "seed " << seed << " draw " << k;
    }
  }
  // one candidate left: the draw is made (the engine advances) and no edge is recorded
  llama_cpp::Dist dist(5);
  const std::vector<float> one = {1.0f};
  llama_cpp::Candidates cur(one.data(), 1);
  EXPECT_FALSE(dist.apply(cur).has_value());
}

TEST(DrawMargin, LlamaCppSamplerRecordsInverseCdfAtEveryDraw) {
  SamplingParams s;
  s.framework = Framework::llama_cpp;
  s.rng = Rng::llama_cpp;  // llama.cpp's dist, as every llama.cpp run draws
  s.mode = DecodeMode::sample;
  s.seed = 9;
  const std::vector<int64_t> ids = {1, 2};
  RunChain sampler = test::torch_run_chain(s, ids, 0);  // no token accepted: the same history at every step
  for (int k = 0; k < 10; ++k) {
    const RunStep step = sampler.step(test::row_of(torch::tensor({1.0f, 1.2f, 0.3f, -2.0f, 0.9f})), k, true);
    ASSERT_TRUE(step.draw.has_value());
    EXPECT_EQ(step.draw->rule, DrawRule::inverse_cdf);
    EXPECT_NE(step.draw->runner_up, *step.token);
    EXPECT_GE(step.draw->margin, 0);
    EXPECT_LE(step.draw->margin, step.final_probs[static_cast<size_t>(*step.token)] + 1e-7);
  }
}

}  // namespace
}  // namespace genrepro
