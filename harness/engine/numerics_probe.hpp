#pragma once
// Which batched layouts of the linear layers give exactly the bits the reference path gives, on
// the BLAS this process loaded, at the thread counts it could use (docs/numerics.md). Measured at
// start-up on the loaded model's own weights, never assumed: the answer depends on the BLAS, its
// kernel, the thread count, the shape and the row's position.
#include <cstdint>
#include <vector>

namespace genrepro {

class Gpt2Model;  // engine/gpt2_model.hpp (libtorch)

// With `blas_threads` BLAS threads, every batch of 1..max_rows rows gives every row the bits of
// that row multiplied alone on one BLAS thread (today's one-run path), for every linear shape.
// max_rows = 0: not even one row keeps them at that thread count.
struct RowBatchProof {
  int blas_threads = 1;
  int64_t max_rows = 0;
};

struct NumericsProbeResult {
  std::vector<RowBatchProof> rows;  // one per thread count probed, 1..max_blas_threads
  // The largest tile T (one BLAS thread) in which every position gives the same bits whatever
  // the other rows hold, for every linear shape; 1 always qualifies (a tile of one row).
  int64_t tile = 1;
  double seconds = 0;

  // The proof for `threads`, or max_rows 0 when that count was not probed.
  RowBatchProof at(int threads) const {
    for (const RowBatchProof& r : rows)
      if (r.blas_threads == threads) return r;
    return RowBatchProof{threads, 0};
  }
};

struct NumericsProbeLimits {
  int max_blas_threads = 2;
  int64_t max_rows = 16;  // larger batches are not tried (the probe's time grows with them)
  int64_t max_tile = 16;
};

// Leaves the BLAS on one thread. Deterministic inputs (a seeded generator), so two probes of the
// same process see the same operands.
NumericsProbeResult probe_numerics(const Gpt2Model& model, const NumericsProbeLimits& limits);

}  // namespace genrepro
