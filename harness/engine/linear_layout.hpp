#pragma once
// How libtorch's linear layers see their rows; apart from engine/gpt2_model.hpp so that the batch
// settings can name it without libtorch's headers (a libtorch-free build has no Gpt2Model).
#include <cstdint>

namespace genrepro {

// How the linear layers (c_attn, c_proj, c_fc, mlp c_proj, lm_head) see their rows
// (docs/numerics.md). tile = 0: every row of a call in one GEMM (the reference numerics: one row
// alone, or a batch the probe proved gives each row those bits). tile = T: GEMMs of exactly T
// rows, the last padded with zeros, so a row's bits never depend on how many rows came with it.
struct LinearLayout {
  int64_t tile = 0;
};

}  // namespace genrepro
