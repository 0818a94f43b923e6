#pragma once
// The float32 operations over a whole row whose bits depend on who computes them: a softmax or a
// sum adds in the order of its kernel's vector registers, and exp/log are a vector library's
// polynomials. Every stage and draw of the chain computes through one RowMath, so the chain's logic
// is written once and its numerics are chosen by the caller:
//   aten_float_math()  libtorch 1.13's CPU kernels with ATen's AVX2 code, written out
//                      (aten_float.hpp): no libtorch, the bits of --cpu-kernels portable
//   the engine's       libtorch's own ops (engine/torch_row_math.hpp), so a run's sampling has the
//                      bits of the libtorch it runs on, whatever kernels that libtorch picks
// Comparisons, masks, elementwise + - * / and sorting are exact in IEEE float32 and stay in the
// stages. Each function names the torch expression it stands for.
#include <cstddef>
#include <vector>

namespace genrepro::sampling {

class RowMath {
 public:
  virtual ~RowMath() = default;
  virtual const char* name() const = 0;
  // torch.softmax(x, -1) of a row.
  virtual std::vector<float> softmax(const std::vector<float>& x) const = 0;
  // torch.log_softmax(x, -1).
  virtual std::vector<float> log_softmax(const std::vector<float>& x) const = 0;
  // torch.exp(x), elementwise over the row.
  virtual std::vector<float> exp(const std::vector<float>& x) const = 0;
  // torch.exp of a one-element tensor.
  virtual float exp(float x) const = 0;
  // x.sum(-1), or x.nansum(-1) when `ignore_nan` (NaN counts as 0).
  virtual float sum(const std::vector<float>& x, bool ignore_nan) const = 0;
  // x.logsumexp(-1): log(sum(exp(x - max))) + max, an infinite max read as 0.
  virtual float logsumexp(const std::vector<float>& x) const = 0;
  // torch.cumsum(x, -1).
  virtual std::vector<float> cumsum(const std::vector<float>& x) const = 0;
};

// The written-out ATen float32 kernels (aten_float.hpp). One immutable instance.
const RowMath& aten_float_math();

}  // namespace genrepro::sampling
