#pragma once
// What the framework reference tests of the engine share: support/reference_vectors.hpp (the
// vectors, the configs, the hashes; no libtorch there, so the model-free chain's tests read the same
// data) and a vector as a tensor.
#include <vector>

#include <torch/torch.h>

#include "support/reference_vectors.hpp"

namespace genrepro::test {

inline torch::Tensor as_tensor(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kFloat32).clone();
}

}  // namespace genrepro::test
