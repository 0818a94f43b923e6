#include "sampling/row_math.hpp"

#include <algorithm>
#include <cmath>

#include "sampling/aten_float.hpp"

namespace genrepro::sampling {

namespace {

class AtenFloatMath final : public RowMath {
 public:
  const char* name() const override { return "aten-avx2-transcribed"; }
  std::vector<float> softmax(const std::vector<float>& x) const override { return aten::softmax(x); }
  std::vector<float> log_softmax(const std::vector<float>& x) const override { return aten::log_softmax(x); }
  std::vector<float> exp(const std::vector<float>& x) const override {
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = aten::exp(x[i]);
    return out;
  }
  float exp(float x) const override { return aten::exp(x); }
  float sum(const std::vector<float>& x, bool ignore_nan) const override { return aten::cascade_sum(x.data(), x.size(), ignore_nan); }
  float logsumexp(const std::vector<float>& x) const override {
    if (x.empty()) return -INFINITY;
    float max = *std::max_element(x.begin(), x.end());
    if (std::isinf(max)) max = 0;
    std::vector<float> shifted(x.size());
    aten::exp_shifted(x.data(), max, shifted.data(), x.size());
    return aten::log(aten::cascade_sum(shifted.data(), shifted.size())) + max;
  }
  std::vector<float> cumsum(const std::vector<float>& x) const override { return aten::cumsum(x); }
};

}  // namespace

const RowMath& aten_float_math() {
  static const AtenFloatMath math;
  return math;
}

}  // namespace genrepro::sampling
