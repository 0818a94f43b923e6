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

// A [V] view of a logits row: the shape the loop's torch code gave the record's ops.
torch::Tensor as_vector(const std::vector<float>& x) {
  return torch::from_blob(const_cast<float*>(x.data()), {static_cast<int64_t>(x.size())}, torch::kFloat32);
}

class TorchStepMath final : public StepMath {
 public:
  const sampling::RowMath& chain() const override { return torch_row_math(); }
  std::vector<float> softmax_at(const std::vector<float>& logits, double temperature) const override {
    const torch::Tensor row = as_vector(logits);
    return to_vector(temperature == 1 ? torch::softmax(row, 0) : torch::softmax(row / temperature, 0));
  }
  std::vector<int64_t> best_ids(const std::vector<float>& logits, int64_t k) const override {
    const torch::Tensor ids = std::get<1>(torch::topk(as_vector(logits), k)).contiguous();
    return std::vector<int64_t>(ids.data_ptr<int64_t>(), ids.data_ptr<int64_t>() + ids.numel());
  }
  double entropy(const std::vector<double>& positive) const override {
    const torch::Tensor p =
        torch::from_blob(const_cast<double*>(positive.data()), {static_cast<int64_t>(positive.size())}, torch::kFloat64);
    return -(p * p.log()).sum().item<double>();
  }
};

}  // namespace

const sampling::RowMath& torch_row_math() {
  static const TorchRowMath math;
  return math;
}

const StepMath& torch_step_math() {
  static const TorchStepMath math;
  return math;
}

}  // namespace genrepro
