// The raced multinomial (engine/multinomial_race.hpp) against torch::multinomial itself: the same
// token on every draw of long chains from one seeded generator each (so the generator advanced
// alike too), on GPT-2-sized distributions after top-p, on small ones, with zeros, one-hot,
// subnormal and tied probabilities; and refusal (std::nullopt) exactly where torch throws.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "support/torch_chains/multinomial_race.hpp"

namespace genrepro {
namespace {

void expect_chain_matches_torch(const std::vector<torch::Tensor>& distributions, uint64_t seed) {
  at::Generator torch_gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::Generator race_gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  for (size_t d = 0; d < distributions.size(); ++d) {
    const torch::Tensor& p = distributions[d];
    const int64_t expected = torch::multinomial(p, 1, false, torch_gen).item<int64_t>();
    const auto got = multinomial_race(p.data_ptr<float>(), p.numel(), *race_gen.get<at::CPUGeneratorImpl>());
    ASSERT_TRUE(got.has_value()) << "draw " << d;
    ASSERT_EQ(*got, expected) << "draw " << d << " seed " << seed;
  }
}

TEST(MultinomialRace, DrawsWhatTorchDrawsOnGpt2SizedNuclei) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 3);
  std::vector<torch::Tensor> chain;
  for (int d = 0; d < 40; ++d) {
    std::vector<float> logits(50257);
    for (float& x : logits) x = normal(rng);
    torch::Tensor l = torch::tensor(logits);
    // keep a nucleus of 1..200 tokens, as top-p leaves
    const int64_t keep = 1 + d * 5;
    const auto kth = std::get<0>(torch::topk(l, keep)).index({keep - 1});
    l = l.masked_fill(l < kth, -std::numeric_limits<float>::infinity());
    chain.push_back(torch::softmax(l, 0).contiguous());
  }
  for (uint64_t seed : {0ull, 1ull, 42ull, 18446744073709551615ull}) expect_chain_matches_torch(chain, seed);
}

TEST(MultinomialRace, DrawsWhatTorchDrawsOnSmallAndEdgeDistributions) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> unit(0, 1);
  std::vector<torch::Tensor> chain;
  for (int d = 0; d < 2000; ++d) {
    const int64_t n = 1 + d % 17;
    std::vector<float> p(static_cast<size_t>(n));
    for (auto& x : p) {
      const float r = unit(rng);
      x = r < 0.3f ? 0.0f : r < 0.4f ? std::numeric_limits<float>::denorm_min() : r < 0.5f ? 0.25f : r;
    }
    if (d % 7 == 0) std::fill(p.begin(), p.end(), 0.0f), p[static_cast<size_t>(d) % p.size()] = 1.0f;  // one-hot
    bool any = false;
    for (float x : p) any = any || x > 0;
    if (!any) p[0] = 1.0f;
    chain.push_back(torch::tensor(p));
  }
  for (uint64_t seed : {7ull, 43ull}) expect_chain_matches_torch(chain, seed);
}

TEST(MultinomialRace, RefusesExactlyWhatTorchRefusesAndLeavesTheGeneratorAlone) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const std::vector<float>& bad : std::vector<std::vector<float>>{{0, 0, 0}, {0.5f, -0.1f}, {inf, 1}, {nan, 1}}) {
    at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(5);
    const torch::Tensor p = torch::tensor(bad);
    EXPECT_FALSE(multinomial_race(p.data_ptr<float>(), p.numel(), *gen.get<at::CPUGeneratorImpl>()).has_value());
    EXPECT_ANY_THROW(torch::multinomial(p, 1, false, gen));
  }
  // Refused input consumed nothing: the next draw is the first draw of a fresh generator.
  at::Generator used = at::make_generator<at::CPUGeneratorImpl>(9);
  const torch::Tensor zeros = torch::zeros({4});
  EXPECT_FALSE(multinomial_race(zeros.data_ptr<float>(), 4, *used.get<at::CPUGeneratorImpl>()).has_value());
  at::Generator fresh = at::make_generator<at::CPUGeneratorImpl>(9);
  const torch::Tensor p = torch::tensor(std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  EXPECT_EQ(*multinomial_race(p.data_ptr<float>(), 4, *used.get<at::CPUGeneratorImpl>()),
            torch::multinomial(p, 1, false, fresh).item<int64_t>());
}

}  // namespace
}  // namespace genrepro
