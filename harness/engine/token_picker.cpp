#include "engine/token_picker.hpp"

#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>

#include "engine/multinomial_race.hpp"

namespace genrepro {

TorchMultinomialPicker::TorchMultinomialPicker(uint64_t seed)
    : generator_(at::make_generator<at::CPUGeneratorImpl>(seed)) {}

int64_t TorchMultinomialPicker::pick(const torch::Tensor& probs) {
  // next_id = torch.multinomial(probs, num_samples=1, generator=rng): the same draws, raced
  // without the logarithms that cannot win (engine/multinomial_race.hpp); torch itself when it
  // would refuse the input, so its message is the one the user sees.
  if (probs.dim() == 1 && probs.scalar_type() == torch::kFloat32) {
    const torch::Tensor contiguous = probs.contiguous();
    auto* generator = generator_.get<at::CPUGeneratorImpl>();
    if (const auto id = multinomial_race(contiguous.data_ptr<float>(), contiguous.numel(), *generator)) return *id;
  }
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
