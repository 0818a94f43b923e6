#pragma once
// The arithmetic of one step of the loop beyond the model: the sampler chain's row math
// (sampling/row_math.hpp) and what the step's record computes from the logits (the
// distributions at T = 1 and at the run's T, the best candidates, the entropy). It is chosen with
// the numerics, so a run's sampling has the bits of the numerics its logits came from:
//   strict_step_math()  the written-out kernels (aten_float.hpp) and fixed-order sums: plain
//                       IEEE float operations, the same bits on every CPU (docs/numerics.md)
//   the engine's        libtorch's own ops (engine/torch_row_math.hpp), the bits of
//                       reference/tiled runs
#include <cstdint>
#include <vector>

#include "sampling/row_math.hpp"

namespace genrepro {

class StepMath {
 public:
  virtual ~StepMath() = default;
  // The sampler chain's row math.
  virtual const sampling::RowMath& chain() const = 0;
  // softmax(logits / T) of the row: torch.softmax(logits / T, 0), and softmax(logits) when T == 1.
  virtual std::vector<float> softmax_at(const std::vector<float>& logits, double temperature) const = 0;
  // The ids of the k largest logits (k <= size), largest first: torch.topk(logits, k).indices.
  virtual std::vector<int64_t> best_ids(const std::vector<float>& logits, int64_t k) const = 0;
  // -(p * log p).sum() in float64 of positive probabilities (the nonzero ones, in id order).
  virtual double entropy(const std::vector<double>& positive) const = 0;
};

// Strict numerics' step math: aten_float_math() for the chain (its operations are plain IEEE
// float32 arithmetic, explicit fma and bit manipulation: no libm, no vector library), the same
// written-out softmax and log for the record, ties among the best candidates broken by the lower
// id, and the entropy summed in id order. One immutable instance.
const StepMath& strict_step_math();

}  // namespace genrepro
