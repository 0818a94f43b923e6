#include "sampling/step_math.hpp"

#include <algorithm>
#include <numeric>

#include "sampling/aten_float.hpp"

namespace genrepro {

namespace {

class StrictStepMath final : public StepMath {
 public:
  const sampling::RowMath& chain() const override { return sampling::aten_float_math(); }

  std::vector<float> softmax_at(const std::vector<float>& logits, double temperature) const override {
    if (temperature == 1) return sampling::aten::softmax(logits);
    const float t = static_cast<float>(temperature);  // the float32 division torch does for a float row
    std::vector<float> scaled(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) scaled[i] = logits[i] / t;
    return sampling::aten::softmax(scaled);
  }

  std::vector<int64_t> best_ids(const std::vector<float>& logits, int64_t k) const override {
    std::vector<int64_t> ids(logits.size());
    std::iota(ids.begin(), ids.end(), 0);
    const auto first = [&logits](int64_t a, int64_t b) {
      const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
      return la != lb ? la > lb : a < b;
    };
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), first);
    ids.resize(static_cast<size_t>(k));
    return ids;
  }

  // One accumulator in id order: the sum's order is the ids', whatever the CPU.
  double entropy(const std::vector<double>& positive) const override {
    double sum = 0;
    for (double p : positive) sum += p * static_cast<double>(sampling::aten::log(static_cast<float>(p)));
    return -sum;
  }
};

}  // namespace

const StepMath& strict_step_math() {
  static const StrictStepMath math;
  return math;
}

}  // namespace genrepro
