#include "engine/token_picker.hpp"

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

namespace genrepro {

TorchMultinomialPicker::TorchMultinomialPicker(uint64_t seed)
    : generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

int64_t TorchMultinomialPicker::pick(const torch::Tensor& probs) {
  // next_id = torch.multinomial(probs, num_samples=1, generator=rng)
  return torch::multinomial(probs, /*num_samples=*/1, /*replacement=*/false, generator_).item<int64_t>();
}

int64_t PortablePicker::pick(const torch::Tensor& probs) {
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
