// No input reaches multinomial with NaN or infinity (docs/sampling.md, "Float32 edges"): the
// picker checks the distribution first and names the step; a valid one is drawn as before.
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/token_picker.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

std::string error_of(TokenPicker& picker, const torch::Tensor& probs) {
  try {
    picker.pick(probs);
  } catch (const NumericsError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenPickerGuard, RefusesWhatIsNotADistributionNamingTheStep) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (const Rng rng : kRngs) {
    SCOPED_TRACE(to_string(rng));
    SamplingParams params;
    params.rng = rng;
    const auto picker = make_token_picker(params);
    EXPECT_EQ(picker->pick(torch::tensor({0.0f, 1.0f, 0.0f})), 1);  // step 0 is fine
    EXPECT_EQ(error_of(*picker, torch::tensor({0.5f, nan, 0.5f})).rfind("step 1: the distribution to draw from holds NaN or infinity", 0), 0u);
    EXPECT_EQ(error_of(*picker, torch::tensor({inf, 0.0f})).rfind("step 1: the distribution to draw from holds NaN or infinity", 0), 0u);
    EXPECT_EQ(error_of(*picker, torch::tensor({-0.5f, 1.5f})).rfind("step 1: the distribution to draw from holds a negative probability", 0), 0u);
    EXPECT_EQ(error_of(*picker, torch::zeros({4})).rfind("step 1: the distribution to draw from holds no positive probability", 0), 0u);
  }
}

// logits / T at the smallest allowed temperature stays finite and one-hot, and draws the argmax.
TEST(TokenPickerGuard, TheSmallestTemperatureGivesAOneHotDistribution) {
  const auto logits = torch::tensor({1.0f, 3.0f, 2.5f, -7.0f});
  const auto probs = torch::softmax(logits / 1e-30, 0);
  ASSERT_TRUE(probs.isfinite().all().item<bool>());
  const auto picker = make_token_picker(SamplingParams{});
  EXPECT_EQ(picker->pick(probs), 1);
  // Below it, float32 gives up: logits / 1e-45 is infinite and the softmax NaN; the guard says so.
  const auto broken = torch::softmax(logits / 1e-45, 0);
  EXPECT_NE(error_of(*picker, broken).find("holds NaN or infinity"), std::string::npos);
}

}  // namespace
}  // namespace genrepro
