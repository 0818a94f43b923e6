#include "engine/token_picker.hpp"

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

#include "util/errors.hpp"

namespace genrepro {

void check_distribution(const torch::Tensor& probs, int64_t step) {
  const auto p = probs.to(torch::kFloat64);
  const bool finite = p.isfinite().all().item<bool>();
  const bool non_negative = finite && (p >= 0).all().item<bool>();
  if (finite && non_negative && p.sum().item<double>() > 0) return;
  const std::string found = !finite ? "NaN or infinity" : !non_negative ? "a negative probability" : "no positive probability";
  throw NumericsError("step " + std::to_string(step) + ": the distribution to draw from holds " + found +
                      "; the logits or the sampling parameters left float32's range (a temperature near its minimum, " +
                      "or broken weights); check the model with 'genrepro generate --greedy' and the temperature");
}

int64_t TokenPicker::pick(const torch::Tensor& probs) {
  check_distribution(probs, step_);
  const int64_t id = draw(probs);
  ++step_;
  return id;
}

TorchMultinomialPicker::TorchMultinomialPicker(uint64_t seed)
    : generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

int64_t TorchMultinomialPicker::draw(const torch::Tensor& probs) {
  // next_id = torch.multinomial(probs, num_samples=1, generator=rng)
  return torch::multinomial(probs, /*num_samples=*/1, /*replacement=*/false, generator_).item<int64_t>();
}

int64_t PortablePicker::draw(const torch::Tensor& probs) {
  const auto contiguous = probs.to(torch::kFloat32).contiguous();
  return race_.sample(contiguous.data_ptr<float>(), static_cast<size_t>(contiguous.numel()));
}

std::unique_ptr<TokenPicker> make_token_picker(const SamplingParams& params) {
  switch (params.rng) {
    case Rng::torch: return std::make_unique<TorchMultinomialPicker>(params.seed);
    case Rng::portable: return std::make_unique<PortablePicker>(params.seed);
  }
  throw std::logic_error("Rng out of range");  // a bug: every enumerator is handled above
}

int64_t pick_greedy(const torch::Tensor& logits) { return logits.argmax().item<int64_t>(); }

}  // namespace genrepro
