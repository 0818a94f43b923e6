#pragma once
// The strict kernels of one instruction set, as a table of functions. Every set computes the same
// IEEE-754 operations for every output (the order strict/strict_gpt2.hpp states); they differ only
// in how many outputs one instruction computes at once. So the set in use decides speed, never bits:
// tests/unit/strict/kernels_test.cpp holds every set this CPU runs to the plain one, bit for bit.
#include <cstdint>
#include <string>
#include <vector>

namespace genrepro::strict {

enum class KernelIsa { plain, avx2, avx512, neon };
const char* to_string(KernelIsa isa);  // "plain", "avx2", "avx512", "neon"

// Output columns per weight panel: a panel is [K][kPanelWidth] floats, k-major, so one k step of a
// panel is one 64-byte line (one AVX-512 vector, two AVX2 vectors, four NEON vectors, or sixteen
// scalars in the plain set).
inline constexpr int64_t kPanelWidth = 16;

// A linear layer's weights as the kernels read them (strict/packed_linear.hpp packs them).
struct PanelView {
  const float* panels = nullptr;  // panel p at panels + p * K * kPanelWidth; columns past N are 0
  const float* bias = nullptr;    // [panel_count * kPanelWidth], zero-padded; nullptr: no bias (the head)
  int64_t K = 0;
  int64_t panel_count = 0;
};

// One query row of one head: softmax(q . k_t / scale) over t in [0, T), times v_t.
struct AttendArgs {
  const float* q = nullptr;       // [D]
  const float* keys = nullptr;    // [T][D], this head's rows of the cache
  const float* values = nullptr;  // [T][D]
  int64_t T = 0;
  int64_t D = 0;
  bool scale = true;              // config.json's scale_attn_weights: divide the scores by `divisor`
  float divisor = 1.0f;           // sqrt(head_dim) rounded to float, as HF's torch.full([], D ** 0.5)
  float* scores = nullptr;        // scratch, [T] at least
  float* out = nullptr;           // [D]
};

struct KernelSet {
  KernelIsa isa = KernelIsa::plain;
  // Rows per block of packed activations (pack_rows, strict/packed_linear.hpp): the MR of the
  // register tile. Only the layout of a scratch copy depends on it, never an operation.
  int row_block = 1;
  // out[r * ldo + j] = (fma chain over k of rows(r, k) * w(k, j), from 0) + bias[j], for every row
  // r < M and every column j < n_out of the panels [panel_begin, panel_end). `rows`: pack_rows's
  // layout for this set's row_block.
  void (*linear)(const PanelView& w, const float* rows, int64_t M, int64_t panel_begin, int64_t panel_end,
                 int64_t n_out, float* out, int64_t ldo) = nullptr;
  // y = (x - mean) * rstd * weight + bias over one row of C (strict/strict_gpt2.hpp's order).
  void (*layer_norm)(const float* x, int64_t C, const float* weight, const float* bias, float eps, float* y) = nullptr;
  // HF's gelu_new, in place.
  void (*gelu_new)(float* x, int64_t n) = nullptr;
  void (*attend)(const AttendArgs& a) = nullptr;
  // The math of strict/fixed_math.hpp over arrays (what the tests compare across sets).
  void (*exp)(const float* x, float* y, int64_t n) = nullptr;
  void (*tanh)(const float* x, float* y, int64_t n) = nullptr;
  float (*fixed_sum)(const float* x, int64_t n) = nullptr;
};

// Every set compiled in that this CPU can run, the plain one first, the fastest last.
std::vector<const KernelSet*> supported_kernel_sets();
// The set `name` names ("plain", "avx2", "avx512", "neon"), or with an empty name the fastest this
// CPU runs. Throws UsageError naming GENREPRO_STRICT_ISA for an unknown name or one this CPU (or
// this build) cannot run.
const KernelSet& choose_kernel_set(const std::string& name);

// Each kernels_<set>.cpp's table, or nullptr where the set is not compiled for this target.
// Whether this CPU runs it is supported_kernel_sets()'s question.
const KernelSet* plain_kernel_set();
const KernelSet* avx2_kernel_set();
const KernelSet* avx512_kernel_set();
const KernelSet* neon_kernel_set();

}  // namespace genrepro::strict
