// The chain's top-p rules (sampling/article_rules.hpp: a radix sort of the values, no index sort,
// with libtorch's row math as the engine runs them) against the literal torch forms
// (tests/support/torch_chains: torch::sort and all) on thousands of random and adversarial vectors: the same kept set and the
// same logits, bit for bit, ties included (a speed-up must not change a bit). Each
// vector also goes through the whole chain and the final softmax, as the loop uses it.
//
// The fast forms hand a vector to the literal one when the last kept value also occurs among the
// removed ones (a tie at the boundary), and such a vector compares the literal form with itself.
// So each test counts the vectors that took the fast path (decided here from torch::sort's values,
// not from the code under test) and asserts a floor on them; ties inside the kept set and inside
// the removed set, which the fast path does handle, have a test of their own.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/torch_row_math.hpp"
#include "sampling/article_rules.hpp"
#include "support/torch_chains/samplers.hpp"

namespace genrepro {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Bitwise equality (torch::equal treats -0 and +0 as equal; the evidence would not).
bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.sizes().equals(b.sizes()) || a.scalar_type() != b.scalar_type()) return false;
  const auto ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.data_ptr(), bc.data_ptr(), static_cast<size_t>(ac.numel()) * ac.element_size()) == 0;
}

// The chain's rule on a [V] float32 row, as a tensor.
torch::Tensor chain_top_p(const torch::Tensor& logits, double p, bool hf_rule) {
  const torch::Tensor c = logits.contiguous();
  std::vector<float> v(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  if (hf_rule) sampling::top_p_hf_rule(v, p, torch_row_math());
  else sampling::top_p_article_rule(v, p, torch_row_math());
  return torch::from_blob(v.data(), {static_cast<int64_t>(v.size())}, torch::kFloat32).clone();
}

// Whether the rules (min_tokens_to_keep 1) take their fast path on `logits`:
// p < 1 and the value at the boundary of the kept set is not shared across it. Computed from
// torch::sort's values, as the literal forms see them.
bool article_rule_is_fast(const torch::Tensor& logits, double p) {
  if (p >= 1) return false;
  const torch::Tensor sorted = std::get<0>(torch::sort(logits, -1, /*descending=*/true)).contiguous();
  const torch::Tensor reached = (torch::softmax(sorted, -1).cumsum(-1) >= p).nonzero();
  const int64_t n = sorted.size(0);
  const int64_t kept = reached.size(0) == 0 ? n : std::min(reached[0][0].item<int64_t>() + 1, n);
  const float* v = sorted.data_ptr<float>();
  return kept == n || v[kept] < v[kept - 1];
}

bool hf_rule_is_fast(const torch::Tensor& logits, double p) {
  if (p >= 1) return false;
  const torch::Tensor sorted = std::get<0>(torch::sort(logits, -1, /*descending=*/false)).contiguous();
  const int64_t n = sorted.size(0);
  const int64_t removed =
      std::min((torch::softmax(sorted, -1).cumsum(-1) <= (1 - p)).sum().item<int64_t>(), std::max<int64_t>(n - 1, 0));
  const float* v = sorted.data_ptr<float>();
  return removed == 0 || v[removed - 1] < v[removed];
}

// Vectors compared, and how many of them took each fast path.
struct FastPathCount {
  int vectors = 0;
  int article_fast = 0;
  int hf_fast = 0;
};

void expect_both_rules_match(const torch::Tensor& logits, double p, const std::string& what, FastPathCount& count) {
  ++count.vectors;
  if (article_rule_is_fast(logits, p)) ++count.article_fast;
  if (hf_rule_is_fast(logits, p)) ++count.hf_fast;
  const torch::Tensor fast = chain_top_p(logits, p, /*hf_rule=*/false);
  const torch::Tensor literal = top_p_filter_by_sort(logits, p);
  ASSERT_TRUE(same_bits(fast, literal)) << what << " p=" << p << " (article rule)";
  ASSERT_TRUE(same_bits(torch::softmax(fast, 0), torch::softmax(literal, 0))) << what;
  const torch::Tensor fast_hf = chain_top_p(logits, p, /*hf_rule=*/true);
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
  FastPathCount count;
  for (int trial = 0; trial < 6; ++trial) {
    const torch::Tensor logits = gpt2_like(rng, 50257, trial % 2 == 0 ? 3.0f : 0.3f);
    for (double p : ps) expect_both_rules_match(logits, p, "gpt2-like trial " + std::to_string(trial), count);
  }
  EXPECT_EQ(count.vectors, 48);
  // Continuous random values seldom tie: every p < 1 (42 of the 48) takes the fast path, bar a few.
  EXPECT_GE(count.article_fast, 40) << count.article_fast << " of 48 took the article rule's fast path";
  EXPECT_GE(count.hf_fast, 40) << count.hf_fast << " of 48 took the HF rule's fast path";
}

TEST(FastTopP, MatchesTheLiteralSortOnSmallAndAdversarialVectors) {
  std::mt19937 rng(1601);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> levels(1, 4);
  FastPathCount count;     // every kind
  FastPathCount distinct;  // kind 0 alone
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
      expect_both_rules_match(logits, p, "kind " + std::to_string(kind) + " trial " + std::to_string(trial),
                              kind == 0 ? distinct : count);
    }
  }
  EXPECT_EQ(count.vectors + distinct.vectors, 6000);
  // The tie-heavy kinds mostly go to the literal form at the boundary (and then compare it with
  // itself); the mostly distinct kind must take the fast path nearly always, or this test would
  // hold the fast forms to little.
  EXPECT_EQ(distinct.vectors, 1000);
  EXPECT_GE(distinct.article_fast, 950) << distinct.article_fast << " of 1000 distinct vectors took the article rule's fast path";
  EXPECT_GE(distinct.hf_fast, 950) << distinct.hf_fast << " of 1000 distinct vectors took the HF rule's fast path";
  std::printf("fast path: article rule %d, HF rule %d of 1000 distinct vectors; %d and %d of the 5000 others\n",
              distinct.article_fast, distinct.hf_fast, count.article_fast, count.hf_fast);
}

// Ties on both sides of a strict boundary: a block of equal top logits that is kept whole, and
// equal logits below it that are removed whole. The order of equal values within either block
// decides nothing, so the fast path must handle every one of these itself, and agree bit for bit.
TEST(FastTopP, TiesInsideTheKeptAndRemovedSetsTakeTheFastPath) {
  std::mt19937 rng(2611);
  std::uniform_int_distribution<int> sizes(1, 12);
  std::uniform_real_distribution<double> gap(0.25, 3.0);
  FastPathCount count;
  for (int trial = 0; trial < 300; ++trial) {
    const int top = sizes(rng), middle = sizes(rng), bottom = sizes(rng);
    const float a = 2.0f, b = static_cast<float>(a - gap(rng)), c = static_cast<float>(b - gap(rng));
    std::vector<float> v;
    v.insert(v.end(), static_cast<size_t>(top), a);
    v.insert(v.end(), static_cast<size_t>(middle), b);
    v.insert(v.end(), static_cast<size_t>(bottom), c);
    std::shuffle(v.begin(), v.end(), rng);
    const torch::Tensor logits = torch::tensor(v, torch::kFloat32);
    // Probabilities of one logit of each block, in double: p half a logit's mass past a block's
    // end puts the boundary between two blocks, far from float32's rounding of the sums.
    const double ea = std::exp(double(a)), eb = std::exp(double(b)), ec = std::exp(double(c));
    const double z = top * ea + middle * eb + bottom * ec;
    const double qa = ea / z, qb = eb / z, qc = ec / z;
    const std::string what = "top " + std::to_string(top) + "x" + std::to_string(a) + ", middle " + std::to_string(middle) +
                             "x" + std::to_string(b) + ", bottom " + std::to_string(bottom) + "x" + std::to_string(c);
    // Article rule (descending): keep exactly the top block, or the top two blocks.
    const double keep_top = (top - 0.5) * qa, keep_two = top * qa + (middle - 0.5) * qb;
    // HF rule (ascending, removes while the running sum stays <= 1 - p): remove exactly the bottom
    // block, or the bottom two blocks.
    const double drop_bottom = 1 - (bottom * qc + 0.5 * qb), drop_two = 1 - (bottom * qc + middle * qb + 0.5 * qa);
    for (double p : {keep_top, keep_two}) {
      const int before = count.article_fast;
      expect_both_rules_match(logits, p, what, count);
      EXPECT_EQ(count.article_fast, before + 1) << what << " p=" << p << ": the article rule's boundary is not strict";
    }
    for (double p : {drop_bottom, drop_two}) {
      const int before = count.hf_fast;
      expect_both_rules_match(logits, p, what, count);
      EXPECT_EQ(count.hf_fast, before + 1) << what << " p=" << p << ": the HF rule's boundary is not strict";
    }
  }
  EXPECT_EQ(count.vectors, 1200);
  EXPECT_GE(count.article_fast, 600);
  EXPECT_GE(count.hf_fast, 600);
}

TEST(FastTopP, TheWholeChainAndFinalDistributionAreUnchanged) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const torch::Tensor logits = gpt2_like(rng, 50257, 2.5f);
    for (double t : {0.7, 1.0, 1.3}) {
      for (int64_t k : {0, 40}) {
        const torch::Tensor scaled = top_k_filter(apply_temperature(logits, t), k);
        ASSERT_TRUE(same_bits(torch::softmax(chain_top_p(scaled, 0.9, false), 0),
                              torch::softmax(top_p_filter_by_sort(scaled, 0.9), 0)))
            << "trial " << trial << " T=" << t << " k=" << k;
      }
    }
  }
}

}  // namespace
}  // namespace genrepro
