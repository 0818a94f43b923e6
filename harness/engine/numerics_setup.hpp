#pragma once
// From what the user asked (NumericsRequest) and what the probe proved (NumericsProbeResult) to
// how runs execute: the linear layout, the batch, BLAS threads and workers, and the evidence's
// numerics block that records all of it (docs/numerics.md).
#include <cstdint>
#include <string>

#include "engine/batched_decoder.hpp"
#include "engine/numerics_probe.hpp"
#include "evidence/numerics_record.hpp"

namespace genrepro {

struct NumericsSetup {
  NumericsRecord record;
  BatchSettings batch;  // for the runs that use the KV cache
  int workers = 1;      // batches decoding at once
};

// What the probe must measure for this request on `threads` cores, for `cached_runs` runs that
// can share a batch (no batch is ever larger, so no larger one is probed).
NumericsProbeLimits probe_limits_for(const NumericsRequest& request, int threads, int64_t cached_runs);

// Throws UsageError for a --batch the probe did not prove (reference, without
// allow_inexact_batch). `cached_runs` caps the batch (no row is ever empty).
NumericsSetup choose_numerics(const NumericsRequest& request, const NumericsProbeResult& probe, int threads,
                              int64_t cached_runs);

// Strict numerics: no probe, nothing pinned. Every cached run decodes in one batch of at most
// --batch (default kStrictDefaultBatch) on all `threads`; the record names the kernel revision
// and, as how it ran, the vector code `kernel_isa` the process used.
inline constexpr int64_t kStrictDefaultBatch = 64;
NumericsSetup choose_strict_numerics(const NumericsRequest& request, int threads, int64_t cached_runs,
                                     const std::string& kernel_isa);

}  // namespace genrepro
