#include "support/torch_chains/token_picker.hpp"

#include <cmath>
#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

#include "support/torch_chains/multinomial_race.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

struct DistributionFacts {
  bool finite = true;
  bool non_negative = true;
  bool any_positive = false;
};

// One pass over the probabilities (the batched loop calls this for every run at every step).
DistributionFacts facts_of(const torch::Tensor& probs) {
  DistributionFacts f;
  if (probs.scalar_type() == torch::kFloat32) {
    const torch::Tensor c = probs.contiguous();
    const float* p = c.data_ptr<float>();
    for (int64_t i = 0, n = c.numel(); i < n; ++i) {
      f.finite = f.finite && std::isfinite(p[i]);
      f.non_negative = f.non_negative && !(p[i] < 0);
      f.any_positive = f.any_positive || p[i] > 0;
    }
    return f;
  }
  const auto p = probs.to(torch::kFloat64);
  f.finite = p.isfinite().all().item<bool>();
  f.non_negative = f.finite && (p >= 0).all().item<bool>();
  f.any_positive = f.finite && p.sum().item<double>() > 0;
  return f;
}

}  // namespace

void check_distribution(const torch::Tensor& probs, int64_t step) {
  const DistributionFacts facts = facts_of(probs);
  const bool finite = facts.finite;
  const bool non_negative = finite && facts.non_negative;
  if (finite && non_negative && facts.any_positive) return;
  const std::string found = !finite ? "NaN or infinity" : !non_negative ? "a negative probability" : "no positive probability";
  throw NumericsError("step " + std::to_string(step) + ": the distribution to draw from holds " + found +
                      "; the logits or the sampling parameters left float32's range (a temperature near its minimum, " +
                      "or broken weights); check the temperature and the model's weights");
}

RacePick TokenPicker::pick_with_margin(const torch::Tensor& probs) {
  check_distribution(probs, step_);
  RacePick drawn = draw(probs);
  ++step_;
  return drawn;
}

TorchMultinomialPicker::TorchMultinomialPicker(uint64_t seed)
    : generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

RacePick TorchMultinomialPicker::draw(const torch::Tensor& probs) {
  // next_id = torch.multinomial(probs, num_samples=1, generator=rng): the same draws, raced
  // without the logarithms that cannot win (engine/multinomial_race.hpp), so the race's
  // runner-up comes with the pick at no extra draw; torch itself when it would refuse the input,
  // so its message is the one the user sees (no margin then: nothing reaches it after
  // check_distribution but a [V] tensor of another dtype or shape, which the loop never makes).
  if (probs.dim() == 1 && probs.scalar_type() == torch::kFloat32) {
    const torch::Tensor contiguous = probs.contiguous();
    auto* generator = generator_.get<at::CPUGeneratorImpl>();
    if (auto drawn = multinomial_race_pick(contiguous.data_ptr<float>(), contiguous.numel(), *generator)) return *drawn;
  }
  return RacePick{torch::multinomial(probs, /*num_samples=*/1, /*replacement=*/false, generator_).item<int64_t>(), std::nullopt};
}

RacePick PortablePicker::draw(const torch::Tensor& probs) {
  const auto contiguous = probs.to(torch::kFloat32).contiguous();
  return race_.race(contiguous.data_ptr<float>(), static_cast<size_t>(contiguous.numel()));
}

std::unique_ptr<TokenPicker> make_token_picker(const SamplingParams& params) {
  switch (params.rng) {
    case Rng::torch: return std::make_unique<TorchMultinomialPicker>(params.seed);
    case Rng::portable: return std::make_unique<PortablePicker>(params.seed);
    case Rng::llama_cpp:
      throw SpecError("rng llama.cpp is the dist stage of llama.cpp's chain (engine/framework_sampler.hpp), "
                      "not a picker of a [V] distribution");
  }
  throw std::logic_error("Rng out of range");  // a bug: every enumerator is handled above
}

std::optional<DrawRecord> race_draw_record(const RacePick& drawn) {
  if (!drawn.margin) return std::nullopt;
  return DrawRecord{DrawRule::exponential_race, drawn.margin->margin, drawn.margin->runner_up};
}

int64_t pick_greedy(const torch::Tensor& logits) { return logits.argmax().item<int64_t>(); }

}  // namespace genrepro
