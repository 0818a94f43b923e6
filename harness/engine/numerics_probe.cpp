#include "engine/numerics_probe.hpp"

#include <algorithm>
#include <chrono>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "evidence/environment.hpp"

namespace genrepro {

namespace {

// The probe's operands: one row `v` per linear shape, at the scale of a layer norm's output, and
// `rows` that all differ. Copies of v show a layout whose order differs in every output; but a
// kernel can change the order of only a few outputs (OpenBLAS's Nehalem kernel, from 8 rows on:
// the head's one output at the boundary of its blocks, index 25128 of 50257), and one row then
// keeps its bits by chance, about one time in four on random data, copies with it. Distinct rows
// are independent chances: M of them keep them all by chance about 4^-M of the time.
struct ProbeInput {
  LinearOp op;
  torch::Tensor v;           // [in]
  torch::Tensor alone;       // op(v) as one row on one BLAS thread: the reference bits   [out]
  torch::Tensor rows;        // [R, in], every row different
  torch::Tensor rows_alone;  // rows_alone[r] = op(rows[r]) as one row on one BLAS thread [R, out]
};

// `rows_gen` is a generator of its own, so that v and the neighbours' data (from `gen`) are the
// ones every earlier probe drew: a distinct-rows check can only take a proof away, never add one.
std::vector<ProbeInput> probe_inputs(const Gpt2Model& model, int64_t distinct_rows, torch::Generator& gen,
                                     torch::Generator& rows_gen) {
  set_blas_threads(1);
  std::vector<ProbeInput> inputs;
  for (const LinearOp& op : model.linear_ops()) {
    torch::Tensor v = torch::randn({op.in_features()}, gen, torch::kFloat32);
    torch::Tensor alone = op(v.unsqueeze(0), LinearLayout{})[0].clone();
    torch::Tensor rows = torch::randn({distinct_rows, op.in_features()}, rows_gen, torch::kFloat32);
    std::vector<torch::Tensor> each;
    for (int64_t r = 0; r < distinct_rows; ++r) each.push_back(op(rows.narrow(0, r, 1), LinearLayout{})[0]);
    inputs.push_back(ProbeInput{op, std::move(v), std::move(alone), std::move(rows), torch::stack(each)});
  }
  return inputs;
}

// Every row of `out` has the bits of `expected`.
bool all_rows_equal(const torch::Tensor& out, const torch::Tensor& expected) {
  for (int64_t r = 0; r < out.size(0); ++r)
    if (!torch::equal(out[r], expected)) return false;
  return true;
}

// M copies of v in one GEMM give every position the alone bits.
bool copies_keep_row_bits(const ProbeInput& in, int64_t m) {
  const torch::Tensor same = in.v.unsqueeze(0).expand({m, in.v.size(0)}).contiguous();
  return all_rows_equal(in.op(same, LinearLayout{}), in.alone);
}

// The first and last rows of M rows that hold other data keep the alone bits too (a kernel path
// that depended on the neighbours would show here).
bool neighbours_keep_row_bits(const ProbeInput& in, int64_t m, torch::Generator& gen) {
  if (m == 1) return true;
  torch::Tensor mixed = torch::randn({m, in.v.size(0)}, gen, torch::kFloat32);
  mixed[0].copy_(in.v);
  mixed[m - 1].copy_(in.v);
  const torch::Tensor out = in.op(mixed, LinearLayout{});
  return torch::equal(out[0], in.alone) && torch::equal(out[m - 1], in.alone);
}

// M different rows in one GEMM: each keeps the bits it has alone.
bool distinct_rows_keep_row_bits(const ProbeInput& in, int64_t m) {
  if (m == 1) return true;  // rows_alone is that GEMM
  return torch::equal(in.op(in.rows.narrow(0, 0, m), LinearLayout{}), in.rows_alone.narrow(0, 0, m));
}

bool batch_keeps_row_bits(const std::vector<ProbeInput>& inputs, int64_t m, torch::Generator* gen) {
  for (const ProbeInput& in : inputs) {
    if (!copies_keep_row_bits(in, m) || !distinct_rows_keep_row_bits(in, m)) return false;
    if (gen != nullptr && !neighbours_keep_row_bits(in, m, *gen)) return false;
  }
  return true;
}

// The largest M whose every size 1..M keeps the bits: each size with copies of one row, the
// answer once more with other data beside it (the probe's time is mostly the head's GEMMs, so
// the neighbours check runs where it decides, not at every size).
int64_t proven_rows(const std::vector<ProbeInput>& inputs, int threads, int64_t max_rows, torch::Generator& gen) {
  if (!set_blas_threads(threads) && threads != 1) return 0;  // no thread control: only 1 is known
  int64_t proven = 0;
  for (int64_t m = 1; m <= max_rows && batch_keeps_row_bits(inputs, m, nullptr); ++m) proven = m;
  while (proven > 1 && !batch_keeps_row_bits(inputs, proven, &gen)) --proven;
  return proven;
}

// Every position of a T-row GEMM gives the same bits whatever the other rows hold.
bool tile_is_position_invariant(const ProbeInput& in, int64_t t, torch::Generator& gen) {
  const torch::Tensor same = in.v.unsqueeze(0).expand({t, in.v.size(0)}).contiguous();
  const torch::Tensor out = in.op(same, LinearLayout{});
  const torch::Tensor first = out[0];
  if (!all_rows_equal(out, first)) return false;
  torch::Tensor mixed = torch::randn({t, in.v.size(0)}, gen, torch::kFloat32);
  mixed[0].copy_(in.v);
  mixed[t - 1].copy_(in.v);
  const torch::Tensor out_mixed = in.op(mixed, LinearLayout{});
  if (!torch::equal(out_mixed[0], first) || !torch::equal(out_mixed[t - 1], first)) return false;
  // T different rows, then the same rows moved down one place: every row keeps its bits at a
  // new position beside new neighbours.
  const torch::Tensor distinct = in.rows.narrow(0, 0, t);
  return torch::equal(in.op(distinct, LinearLayout{}).roll(1, 0), in.op(distinct.roll(1, 0), LinearLayout{}));
}

int64_t largest_tile(const std::vector<ProbeInput>& inputs, int64_t max_tile, torch::Generator& gen) {
  set_blas_threads(1);
  for (int64_t t = max_tile; t > 1; --t) {
    bool all = true;
    for (const ProbeInput& in : inputs) {
      if (!tile_is_position_invariant(in, t, gen)) {
        all = false;
        break;
      }
    }
    if (all) return t;
  }
  return 1;
}

}  // namespace

NumericsProbeResult probe_numerics(const Gpt2Model& model, const NumericsProbeLimits& limits) {
  torch::NoGradGuard no_grad;
  const auto start = std::chrono::steady_clock::now();
  torch::Generator gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/20261201);
  torch::Generator rows_gen = at::make_generator<at::CPUGeneratorImpl>(/*seed=*/20261202);
  const int64_t distinct_rows = std::max<int64_t>({limits.max_rows, limits.max_tile, 1});
  const std::vector<ProbeInput> inputs = probe_inputs(model, distinct_rows, gen, rows_gen);
  NumericsProbeResult result;
  for (int threads = 1; threads <= limits.max_blas_threads; ++threads)
    result.rows.push_back(RowBatchProof{threads, proven_rows(inputs, threads, limits.max_rows, gen)});
  result.tile = largest_tile(inputs, limits.max_tile, gen);
  set_blas_threads(1);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace genrepro
