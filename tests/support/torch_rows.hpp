#pragma once
// The loop works on plain float32 rows; engine tests build their logits and references with
// torch. These convert between the two and make the chain of reference/tiled runs.
#include <cstdint>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "engine/run_chain.hpp"
#include "engine/torch_row_math.hpp"

namespace genrepro::test {

// A [V] float32 tensor's values (any dtype converted to float32, as the model's rows are).
inline std::vector<float> row_of(const torch::Tensor& t) {
  const torch::Tensor c = t.reshape({-1}).to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// A row as a [V] float32 tensor (a copy).
inline torch::Tensor tensor_of(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kFloat32).clone();
}

// The chain a reference or tiled run steps: the run's preset with libtorch's row math.
inline RunChain torch_run_chain(const SamplingParams& s, std::vector<int64_t> history, int64_t eos_token_id) {
  return RunChain(s, std::move(history), eos_token_id, torch_row_math());
}

}  // namespace genrepro::test
