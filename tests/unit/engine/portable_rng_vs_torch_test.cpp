// rng "portable" against torch::multinomial on the same probabilities and seeds: many seeds, many
// distributions (hand-made, peaked, flat, with zeros, GPT-2-sized), sequences of draws from one
// generator. Every pick must be identical; the test counts them so the report can say how many.
#include <random>

#include <gtest/gtest.h>

#include "params/portable_rng.hpp"
#include "support/torch_chains/token_picker.hpp"

namespace genrepro {
namespace {

constexpr int64_t kGpt2Vocab = 50257;  // the size that matters; nothing here depends on GPT-2's weights

// softmax(scale * randn(V)) with a fixed std::mt19937 so the distributions are the same every run;
// `zero_every` > 0 zeroes every n-th entry (what top-k / top-p leave behind).
torch::Tensor make_probs(int64_t vocab, double scale, uint32_t seed, int64_t zero_every = 0) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal;
  std::vector<float> logits(vocab);
  for (auto& l : logits) l = static_cast<float>(scale) * normal(engine);
  auto t = torch::tensor(logits);
  if (zero_every > 0) t.index_put_({torch::arange(0, vocab, zero_every)}, -std::numeric_limits<float>::infinity());
  return torch::softmax(t, 0);
}

// Draws `draws` tokens from each of `probs` in turn with one generator per rng, compares all.
int64_t compare_sequences(uint64_t seed, const std::vector<torch::Tensor>& probs, int draws) {
  TorchMultinomialPicker by_torch(seed);
  PortablePicker portable(seed);
  int64_t compared = 0;
  for (int d = 0; d < draws; ++d) {
    for (size_t k = 0; k < probs.size(); ++k) {
      const int64_t a = by_torch.pick(probs[k]);
      const int64_t b = portable.pick(probs[k]);
      EXPECT_EQ(a, b) << "seed " << seed << " draw " << d << " distribution " << k;
      if (a != b) return compared;
      ++compared;
    }
  }
  return compared;
}

TEST(PortableVsTorch, SmallDistributionsManySeeds) {
  const std::vector<torch::Tensor> probs = {
      torch::tensor({0.1f, 0.2f, 0.3f, 0.4f}), torch::tensor({1.f}), torch::tensor({0.f, 1.f, 0.f}),
      torch::tensor({0.5f, 0.5f}),             // a tie
      torch::tensor({1e-30f, 1.f, 1e-30f}),     // vanishing weights
      torch::tensor({2.f, 6.f, 0.f, 2.f}),      // unnormalised, as multinomial accepts
      make_probs(17, 1.0, 1), make_probs(100, 3.0, 2, 3), make_probs(1000, 0.5, 3)};
  int64_t compared = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) compared += compare_sequences(seed, probs, 2);
  compared += compare_sequences(uint64_t{1} << 40, probs, 2);     // seeds wider than 32 bits
  compared += compare_sequences(UINT64_MAX, probs, 2);
  EXPECT_EQ(compared, 302 * 2 * 9);
  RecordProperty("draws_compared", std::to_string(compared));
}

TEST(PortableVsTorch, VocabularySizedDistributions) {
  // Shapes like GPT-2's predictions: peaked (one token ~ all the mass), spread, and a nucleus.
  const std::vector<torch::Tensor> probs = {make_probs(kGpt2Vocab, 4.0, 10), make_probs(kGpt2Vocab, 1.5, 11),
                                            make_probs(kGpt2Vocab, 2.5, 12, 2)};
  int64_t compared = 0;
  for (uint64_t seed : {0u, 1u, 41u, 42u, 43u, 1000u, 65535u, 4294967295u}) compared += compare_sequences(seed, probs, 8);
  EXPECT_EQ(compared, 8 * 8 * 3);
  RecordProperty("draws_compared", std::to_string(compared));
}

}  // namespace
}  // namespace genrepro
