#pragma once
// The chain's row math (sampling/row_math.hpp) computed by libtorch's own ops, as the article's and
// transformers' torch code calls them: a run's sampling then has the bits of the libtorch it runs
// on, whichever vector kernels that libtorch picks (ATEN_CPU_CAPABILITY), and the chain's logic is
// the one the model-free `sample` runs.
#include "sampling/row_math.hpp"
#include "sampling/step_math.hpp"

namespace genrepro {

// One immutable instance; stateless, so every run and thread shares it.
const sampling::RowMath& torch_row_math();

// Reference and tiled numerics' step math (sampling/step_math.hpp): torch_row_math() for the chain
// and the torch expressions the step record has always been computed with.
const StepMath& torch_step_math();

}  // namespace genrepro
