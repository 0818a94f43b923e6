#include "engine/numerics_setup.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/run_environment.hpp"
#include "strict/strict_gpt2.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

constexpr int64_t kProbeRows = 16;  // batches beyond this are not probed (nor chosen by default)
constexpr int64_t kProbeTile = 16;

// Reference: the most BLAS threads that keep a lone row's bits, for one batch. Only on one BLAS
// thread do several batches run at once: the BLAS thread count is process-wide, and a prefill
// (several rows of one prompt) must run on one thread, as a lone run's does.
int reference_blas_threads(const NumericsProbeResult& probe, int threads) {
  for (int t = threads; t > 1; --t)
    if (probe.at(t).max_rows >= 1) return t;
  return 1;
}

OrderedJson probe_json(const NumericsProbeResult& probe) {
  OrderedJson rows = OrderedJson::array();
  for (const RowBatchProof& r : probe.rows) rows.push_back({{"blas_threads", r.blas_threads}, {"max_rows", r.max_rows}});
  return {{"rows_keeping_reference_bits", rows}, {"largest_invariant_tile", probe.tile}, {"seconds", probe.seconds}};
}

void check_batch(const NumericsRequest& request, int64_t proven, int blas_threads) {
  if (!request.batch || *request.batch <= proven || request.allow_inexact_batch) return;
  throw UsageError("--batch " + std::to_string(*request.batch) + ": the numerics probe proved at most " +
                   std::to_string(proven) + " rows keep the reference bits with this BLAS on " +
                   std::to_string(blas_threads) + (blas_threads == 1 ? " thread" : " threads") +
                   "; give --batch " + std::to_string(std::max<int64_t>(proven, 1)) +
                   " or less, --numerics tiled (batch-invariant by construction), or --allow-inexact-batch "
                   "(recorded in the evidence)");
}

}  // namespace

NumericsProbeLimits probe_limits_for(const NumericsRequest& request, int threads, int64_t cached_runs) {
  NumericsProbeLimits limits;
  limits.max_blas_threads = std::max(threads, 1);
  if (request.mode == NumericsMode::reference) {
    const int64_t useful = std::min<int64_t>(request.batch.value_or(kProbeRows), std::max<int64_t>(cached_runs, 1));
    limits.max_rows = std::clamp<int64_t>(useful, 1, kProbeRows);
    limits.max_tile = 1;
  } else {
    limits.max_rows = 1;
    limits.max_tile = kProbeTile;
  }
  return limits;
}

NumericsSetup choose_numerics(const NumericsRequest& request, const NumericsProbeResult& probe, int threads,
                              int64_t cached_runs) {
  NumericsSetup s;
  if (request.mode == NumericsMode::strict) throw std::logic_error("choose_numerics: strict runs take choose_strict_numerics");
  s.record.mode = request.mode;
  s.record.kernels = loaded_kernels(request.cpu_kernels);
  OrderedJson& ex = s.record.execution;
  const int64_t runs = std::max<int64_t>(cached_runs, 1);
  if (request.mode == NumericsMode::reference) {
    const int blas = reference_blas_threads(probe, threads);
    const int64_t proven = std::max<int64_t>(probe.at(blas).max_rows, 1);
    check_batch(request, proven, blas);
    s.record.inexact_batch = request.batch && *request.batch > proven && std::min(*request.batch, runs) > proven;
    s.workers = blas == 1 ? std::max(threads, 1) : 1;
    s.batch.batch = std::min(request.batch.value_or(proven), runs);
    s.batch.decode_blas_threads = blas;
    s.batch.sampler_threads = blas;  // the cores the BLAS used, idle while the runs sample
    ex["batch_limit"] = proven;
  } else {
    s.record.tile = probe.tile;
    s.batch.layout.tile = probe.tile;
    s.workers = std::max(threads, 1);
    s.batch.batch = std::min(request.batch.value_or(probe.tile), runs);
    s.batch.decode_blas_threads = 1;
  }
  s.batch.prefill_blas_threads = 1;
  ex["batch"] = s.batch.batch;
  ex["workers"] = s.workers;
  ex["decode_blas_threads"] = s.batch.decode_blas_threads;
  ex["prefill_blas_threads"] = s.batch.prefill_blas_threads;
  ex["sampler_threads"] = s.batch.sampler_threads;
  ex["torch_intra_op_threads"] = 1;
  ex["allow_inexact_batch"] = request.allow_inexact_batch;
  ex["threads"] = {{"asked", request.threads_asked ? OrderedJson(*request.threads_asked) : OrderedJson("default")},
                   {"used", std::max(threads, 1)}};
  ex["probe"] = probe_json(probe);
  // The user's own values that portable replaced: they did not decide the bits, so they are
  // recorded here, with the other facts of how the runs executed, and never compared.
  if (!request.overridden_env.empty()) {
    OrderedJson overridden = OrderedJson::object();
    for (const auto& [name, value] : request.overridden_env) overridden[name] = value;
    ex["cpu_kernels_overrode"] = overridden;
  }
  return s;
}

NumericsSetup choose_strict_numerics(const NumericsRequest& request, int threads, int64_t cached_runs,
                                     const std::string& kernel_isa) {
  NumericsSetup s;
  s.record.mode = NumericsMode::strict;
  s.record.kernel_revision = strict::kStrictKernelRevision;
  s.workers = std::max(threads, 1);  // recompute runs at once; the batch's forward uses as many threads
  s.batch.batch = std::min(request.batch.value_or(kStrictDefaultBatch), std::max<int64_t>(cached_runs, 1));
  OrderedJson& ex = s.record.execution;
  ex["batch"] = s.batch.batch;
  ex["threads"] = {{"asked", request.threads_asked ? OrderedJson(*request.threads_asked) : OrderedJson("default")},
                   {"used", std::max(threads, 1)}};
  ex["kernel_isa"] = kernel_isa;
  return s;
}

}  // namespace genrepro
