#pragma once
// How a token is drawn from the final distribution. One picker per run, seeded once, so the k-th
// draw of a run is the k-th draw of the article's `torch.Generator(device="cpu").manual_seed(seed)`.
#include <cstdint>
#include <memory>

#include <torch/torch.h>

#include "evidence/run_record.hpp"
#include "params/portable_rng.hpp"
#include "params/run_params.hpp"

namespace genrepro {

class TokenPicker {
 public:
  virtual ~TokenPicker() = default;
  // probs [V] float32 (softmax of the filtered logits) -> the drawn token id. A run draws once
  // per step, so the k-th call is step k. Throws NumericsError naming the step when `probs` is
  // not a distribution (NaN, infinity, a negative entry, or nothing positive): no such input
  // reaches multinomial, whose answer to it is undefined.
  int64_t pick(const torch::Tensor& probs) { return pick_with_margin(probs).token; }
  // The same draw (the same step, the same generator use) with how close it came to another
  // token: RaceMargin, absent when no other token could have won.
  RacePick pick_with_margin(const torch::Tensor& probs);

 private:
  virtual RacePick draw(const torch::Tensor& probs) = 0;
  int64_t step_ = 0;
};

// Throws NumericsError ("step 3: ...") unless every entry of `probs` is finite and >= 0 and
// their sum is positive.
void check_distribution(const torch::Tensor& probs, int64_t step);

// Rng::torch: torch::multinomial(probs, 1, /*replacement=*/false, generator) with a CPU generator
// made from the seed, as torch.Generator(device="cpu").manual_seed(seed).
class TorchMultinomialPicker : public TokenPicker {
 public:
  explicit TorchMultinomialPicker(uint64_t seed);

 private:
  RacePick draw(const torch::Tensor& probs) override;
  at::Generator generator_;
};

// Rng::portable: the same exponential race over std::mt19937 (harness/params/portable_rng.hpp).
class PortablePicker : public TokenPicker {
 public:
  explicit PortablePicker(uint64_t seed) : race_(seed) {}

 private:
  RacePick draw(const torch::Tensor& probs) override;
  PortableMultinomial race_;
};

// The picker params.rng names, seeded with params.seed.
std::unique_ptr<TokenPicker> make_token_picker(const SamplingParams& params);

// The step record of a race's margin (steps[].draw, rule exponential_race); absent with it.
std::optional<DrawRecord> race_draw_record(const RacePick& drawn);

// The article's greedy pick: torch.argmax(logits) (the first index among ties).
int64_t pick_greedy(const torch::Tensor& logits);

}  // namespace genrepro
