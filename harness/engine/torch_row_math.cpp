#include "engine/torch_row_math.hpp"

#include <cstring>

#include <torch/torch.h>

namespace genrepro {

namespace {

// A [1, n] view of the row: the shape transformers' processors see (scores [batch, V]); the
// article's [V] rows reach the same last-dimension kernels.
torch::Tensor as_row(const std::vector<float>& x) {
  return torch::from_blob(const_cast<float*>(x.data()), {1, static_cast<int64_t>(x.size())}, torch::kFloat32);
}

std::vector<float> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  std::vector<float> out(static_cast<size_t>(c.numel()));
  if (!out.empty()) std::memcpy(out.data(), c.data_ptr<float>(), out.size() * sizeof(float));
  return out;
}

class TorchRowMath final : public sampling::RowMath {
 public:
  const char* name() const override { return "libtorch"; }
  std::vector<float> softmax(const std::vector<float>& x) const override { return to_vector(torch::softmax(as_row(x), -1)); }
  std::vector<float> log_softmax(const std::vector<float>& x) const override {
    return to_vector(torch::log_softmax(as_row(x), -1));
  }
  std::vector<float> exp(const std::vector<float>& x) const override { return to_vector(torch::exp(as_row(x))); }
  float exp(float x) const override { return torch::exp(torch::full({1}, x, torch::kFloat32)).item<float>(); }
  float sum(const std::vector<float>& x, bool ignore_nan) const override {
    return (ignore_nan ? as_row(x).nansum(-1) : as_row(x).sum(-1)).item<float>();
  }
  float logsumexp(const std::vector<float>& x) const override { return as_row(x).logsumexp(-1).item<float>(); }
  std::vector<float> cumsum(const std::vector<float>& x) const override { return to_vector(as_row(x).cumsum(-1)); }
};

}  // namespace

const sampling::RowMath& torch_row_math() {
  static const TorchRowMath math;
  return math;
}

}  // namespace genrepro
