#include "sampling/step_math.hpp"

#include <algorithm>
#include <numeric>

#include "sampling/aten_float.hpp"

namespace genrepro {

namespace {

// Up to this many best ids are found in one pass over the row; more are sorted for.
constexpr int64_t kFewBest = 64;

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
    const auto first = [&logits](int64_t a, int64_t b) {
      const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
      return la != lb ? la > lb : a < b;
    };
    if (k > kFewBest) {
      std::vector<int64_t> ids(logits.size());
      std::iota(ids.begin(), ids.end(), 0);
      std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), first);
      ids.resize(static_cast<size_t>(k));
      return ids;
    }
    // The few a record lists, kept in order in one pass over the row: the same ids as the sort
    // above (the order is total: ties go to the lower id), without sorting every id of the row.
    // Ids come in ascending order, so a later id goes before the last kept one only with a larger
    // logit: while k are kept, one comparison with the last one's logit turns most ids away.
    std::vector<int64_t> best;
    best.reserve(static_cast<size_t>(k) + 1);
    const auto n = static_cast<int64_t>(logits.size());
    float last_kept = 0;
    for (int64_t id = 0; id < n && k > 0; ++id) {
      if (static_cast<int64_t>(best.size()) == k && !(logits[static_cast<size_t>(id)] > last_kept)) continue;
      best.insert(std::upper_bound(best.begin(), best.end(), id, first), id);
      if (static_cast<int64_t>(best.size()) > k) best.pop_back();
      last_kept = logits[static_cast<size_t>(best.back())];
    }
    return best;
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
