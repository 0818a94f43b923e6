// The fast top-p filters (a radix sort of the values, no index sort) against the literal forms
// (torch::sort and all) on thousands of random and adversarial vectors: the same kept set and the
// same logits, bit for bit, ties included (issue 16: a speed-up must not change a bit). Each
// vector also goes through the whole chain and the final softmax, as the loop uses it.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/samplers.hpp"

namespace genrepro {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Bitwise equality (torch::equal treats -0 and +0 as equal; the evidence would not).
bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.sizes().equals(b.sizes()) || a.scalar_type() != b.scalar_type()) return false;
  const auto ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.data_ptr(), bc.data_ptr(), static_cast<size_t>(ac.numel()) * ac.element_size()) == 0;
}

void expect_both_rules_match(const torch::Tensor& logits, double p, const std::string& what) {
  const torch::Tensor fast = top_p_filter(logits, p);
  const torch::Tensor literal = top_p_filter_by_sort(logits, p);
  ASSERT_TRUE(same_bits(fast, literal)) << what << " p=" << p << " (article rule)";
  ASSERT_TRUE(same_bits(torch::softmax(fast, 0), torch::softmax(literal, 0))) << what;
  const torch::Tensor fast_hf = top_p_filter_hf(logits, p);
  const torch::Tensor literal_hf = top_p_filter_hf_by_sort(logits, p);
  ASSERT_TRUE(same_bits(fast_hf, literal_hf)) << what << " p=" << p << " (hf rule)";
}

// GPT-2-like logits: a normal bulk with a few strong candidates.
torch::Tensor gpt2_like(std::mt19937& rng, int64_t vocab, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(vocab));
  for (float& x : v) x = normal(rng);
  std::uniform_int_distribution<int64_t> pick(0, vocab - 1);
  for (int i = 0; i < 5; ++i) v[static_cast<size_t>(pick(rng))] += 4 * scale;
  return torch::tensor(v, torch::kFloat32);
}

TEST(FastTopP, MatchesTheLiteralSortOnRandomGpt2SizedLogits) {
  std::mt19937 rng(16);
  const std::vector<double> ps = {1e-9, 0.05, 0.5, 0.9, 0.95, 0.999, 0.9999999, 1.0};
  for (int trial = 0; trial < 6; ++trial) {
    const torch::Tensor logits = gpt2_like(rng, 50257, trial % 2 == 0 ? 3.0f : 0.3f);
    for (double p : ps) expect_both_rules_match(logits, p, "gpt2-like trial " + std::to_string(trial));
  }
}

TEST(FastTopP, MatchesTheLiteralSortOnSmallAndAdversarialVectors) {
  std::mt19937 rng(1601);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> levels(1, 4);
  int checked = 0;
  for (int trial = 0; trial < 1200; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(trial % 40);
    std::vector<float> v(static_cast<size_t>(n));
    const int kind = trial % 6;
    for (auto& x : v) {
      switch (kind) {
        case 0: x = static_cast<float>(unit(rng) * 10 - 5); break;      // distinct, mostly
        case 1: x = static_cast<float>(levels(rng));  break;             // many ties at every boundary
        case 2: x = unit(rng) < 0.3 ? -kInf : static_cast<float>(levels(rng)); break;  // masked by top-k
        case 3: x = unit(rng) < 0.5 ? 0.0f : -0.0f; break;               // signed zeros only
        case 4: x = static_cast<float>(unit(rng) < 0.5 ? 88.0 : -88.0) * static_cast<float>(levels(rng)); break;  // exp's edges
        default: x = std::nextafter(1.0f, unit(rng) < 0.5 ? 0.0f : 2.0f); break;  // ties by one ulp
      }
    }
    const torch::Tensor logits = torch::tensor(v, torch::kFloat32);
    for (double p : {0.1, 0.5, 0.75, 0.9, 0.999999}) {
      expect_both_rules_match(logits, p, "kind " + std::to_string(kind) + " trial " + std::to_string(trial));
      ++checked;
    }
  }
  EXPECT_EQ(checked, 6000);
}

TEST(FastTopP, TheWholeChainAndFinalDistributionAreUnchanged) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const torch::Tensor logits = gpt2_like(rng, 50257, 2.5f);
    for (double t : {0.7, 1.0, 1.3}) {
      for (int64_t k : {0, 40}) {
        const torch::Tensor scaled = top_k_filter(apply_temperature(logits, t), k);
        ASSERT_TRUE(same_bits(torch::softmax(top_p_filter(scaled, 0.9), 0),
                              torch::softmax(top_p_filter_by_sort(scaled, 0.9), 0)))
            << "trial " << trial << " T=" << t << " k=" << k;
      }
    }
  }
}

}  // namespace
}  // namespace genrepro
