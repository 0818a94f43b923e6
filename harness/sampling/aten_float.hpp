#pragma once
// The float32 operations of the torch chains (the article's and transformers' torch ops)
// written out as libtorch 1.13's CPU kernels compute them with ATen's AVX2 code (what
// --cpu-kernels portable pins, and 1.13's choice on any AVX2 CPU: it uses its AVX-512 kernels,
// whose registers hold 16 floats and so sum in another order, only when ATEN_CPU_CAPABILITY asks),
// so that the model-free chain gets the engine's bits where the order of a kernel's arithmetic is
// known. Each function names the kernel it follows; docs/sampling.md ("The
// model-free chain") says which operations match bit for bit and which only to a tolerance.
//
// Compiled with -ffp-contract=off: a multiply-add is fused only where written as std::fma, which
// is where the kernel fuses (Sleef's polynomial under AVX2).
#include <cstddef>
#include <vector>

namespace genrepro::sampling::aten {

// Vectorized<float>::exp(): Sleef_expf8_u10 (1-ulp), transcribed lane for lane. std::exp differs
// from it in about one value in eleven (glibc's expf is correctly rounded, Sleef's is not always);
// held to torch.exp bit for bit by the engine tests.
float exp(float x);
// out[i] = exp(x[i] - shift) for i < n, the bits of the scalar exp (eight lanes at a time where
// the CPU has AVX2 and FMA).
void exp_shifted(const float* x, float shift, float* out, size_t n);

// The sum of `n` floats in the order vec::reduce_all adds them for the softmax: 8 float
// accumulators (one AVX2 register) over whole blocks of 8, the tail added into the first lanes,
// then the lanes folded as the _mm256 shuffles do, ((0+4)+(2+6))+((1+5)+(3+7)); fewer than 8
// values: one after another.
float lane_sum(const float* v, size_t n);

// torch.softmax(x, -1) of a contiguous float32 row (_vec_softmax_lastdim): max, exp(x - max),
// lane_sum, then every value times 1 / sum (a multiplication by the reciprocal, not a division).
// All -infinity: NaN everywhere, as torch.
void softmax(const float* x, float* out, size_t n);
std::vector<float> softmax(const std::vector<float>& x);

// torch.cumsum of a float32 row: a double accumulator, each running total rounded to float
// (cumsum_cpu_kernel accumulates in acc_type<float> = double).
std::vector<float> cumsum(const std::vector<float>& x);

// Vectorized<float>::log(): Sleef_logf8_u10 (its xlogf_u1, double-float arithmetic with FMA),
// transcribed; glibc's logf differs from it in the last bit now and then.
float log(float x);

// torch.log_softmax(x, -1) of a row (_vec_log_softmax_lastdim): max, the sum of exp(x - max) in
// lane order, its log, then (x - max) - log(sum).
std::vector<float> log_softmax(const std::vector<float>& x);

// torch.sum / torch.nansum of a contiguous float32 row with one intra-op thread (SumKernel.cpp's
// cascade_sum, float accumulators): rows of 8 or more as 8-float vectors, summed 4 at a time in
// a cascade of 4 levels (level_step 2^max(4, ceil(log2 n) / 4)), the leftover vectors into the
// first, the 4 partials folded, then the elements past the last whole vector and the 8 lanes in
// order onto 0; shorter rows as 4 scalar partials. `ignore_nan`: NaN counts as 0 (nansum). With
// more intra-op threads, libtorch splits rows of 32,768 or more between them and sums otherwise;
// genrepro's runs use one (engine/run_environment.cpp).
float cascade_sum(const float* v, size_t n, bool ignore_nan = false);

}  // namespace genrepro::sampling::aten
