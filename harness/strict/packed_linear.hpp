#pragma once
// A linear layer's weights packed once, at load, in the layout the kernels stream
// (strict/kernel_set.hpp): panels of kPanelWidth output columns, each [K][kPanelWidth], k-major and
// contiguous, the last panel zero-padded; the bias zero-padded alike. apply() never repacks.
#include <cstdint>
#include <memory>

#include "strict/kernel_set.hpp"

namespace genrepro::strict {

class ThreadTeam;

// Floats on 64-byte boundaries (one cache line, one AVX-512 vector), so a panel's k step is one line.
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(size_t n);  // zero-filled
  // Room for n floats left as the allocator gives it: for a buffer the caller writes whole (the
  // weights' panels are half a gigabyte on GPT-2, and a zero-fill before the copy doubles the
  // pass over them).
  static AlignedFloats uninitialized(size_t n);
  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float[], Free> data_;
  size_t size_ = 0;
};

class PackedLinear {
 public:
  PackedLinear() = default;
  // A Conv1D (GPT-2's c_attn, c_proj, c_fc): weight [K][N] as stored, bias [N] (or nullptr).
  static PackedLinear from_in_out(const float* weight, const float* bias, int64_t K, int64_t N);
  // nn.Linear's layout, weight [N][K], no bias: the head, wte used transposed.
  static PackedLinear from_out_in(const float* weight, int64_t N, int64_t K);

  int64_t in_features() const { return K_; }
  int64_t out_features() const { return N_; }
  // w(k, j) as packed (the embedding reads wte's rows back out of the head's panels).
  float weight(int64_t k, int64_t j) const;
  PanelView view() const;

  // out[r * n_out + j] = (fma chain over k = 0..K-1 of x[r * K + k] * w(k, j), from 0) + bias[j]
  // (no addition without a bias), for r < M and j < n_out <= out_features(). The team splits
  // the columns; each output is computed whole by one thread.
  void apply(const KernelSet& kernels, const float* x, int64_t M, int64_t n_out, float* out, ThreadTeam& team) const;

 private:
  AlignedFloats panels_;
  AlignedFloats bias_;
  bool has_bias_ = false;
  int64_t K_ = 0;
  int64_t N_ = 0;
  int64_t panel_count_ = 0;
};

// Rows x [M][K] as the kernels broadcast them: blocks of row_block rows (the last may be
// shorter), block b at out + b * row_block * K, laid out [K][rows in block].
void pack_rows(const float* x, int64_t M, int64_t K, int row_block, float* out);

}  // namespace genrepro::strict
