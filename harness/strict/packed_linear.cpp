#include "strict/packed_linear.hpp"

#include <algorithm>
#include <new>
#include <vector>

#include "strict/thread_team.hpp"

namespace genrepro::strict {

namespace {

constexpr std::align_val_t kLineAlign{64};

int64_t panels_for(int64_t columns) { return (columns + kPanelWidth - 1) / kPanelWidth; }

// Panels a job takes at least: the kernels' column group (kernels.inc), so a split between jobs
// never cuts a register tile short.
constexpr int64_t kJobPanels = 4;

}  // namespace

void AlignedFloats::Free::operator()(float* p) const { ::operator delete[](p, kLineAlign); }

AlignedFloats::AlignedFloats(size_t n) : AlignedFloats(uninitialized(n)) { std::fill(data_.get(), data_.get() + n, 0.0f); }

AlignedFloats AlignedFloats::uninitialized(size_t n) {
  AlignedFloats a;
  a.data_.reset(static_cast<float*>(::operator new[](std::max<size_t>(n, 1) * sizeof(float), kLineAlign)));
  a.size_ = n;
  return a;
}

PackedLinear PackedLinear::from_in_out(const float* weight, const float* bias, int64_t K, int64_t N) {
  PackedLinear p;
  p.K_ = K;
  p.N_ = N;
  p.panel_count_ = panels_for(N);
  p.panels_ = AlignedFloats::uninitialized(static_cast<size_t>(p.panel_count_ * K * kPanelWidth));
  float* dst = p.panels_.data();
  for (int64_t panel = 0; panel < p.panel_count_; ++panel) {
    const int64_t j0 = panel * kPanelWidth;
    const int64_t width = std::min(kPanelWidth, N - j0);
    for (int64_t k = 0; k < K; ++k) {
      float* line = dst + (panel * K + k) * kPanelWidth;
      std::copy_n(weight + k * N + j0, width, line);
      std::fill(line + width, line + kPanelWidth, 0.0f);  // the last panel's columns past N
    }
  }
  if (bias != nullptr) {
    p.has_bias_ = true;
    p.bias_ = AlignedFloats(static_cast<size_t>(p.panel_count_ * kPanelWidth));
    std::copy_n(bias, N, p.bias_.data());
  }
  return p;
}

PackedLinear PackedLinear::from_out_in(const float* weight, int64_t N, int64_t K) {
  PackedLinear p;
  p.K_ = K;
  p.N_ = N;
  p.panel_count_ = panels_for(N);
  p.panels_ = AlignedFloats::uninitialized(static_cast<size_t>(p.panel_count_ * K * kPanelWidth));
  float* dst = p.panels_.data();
  for (int64_t j = 0; j < p.panel_count_ * kPanelWidth; ++j) {  // the last panel's columns past N are 0
    float* col = dst + (j / kPanelWidth) * K * kPanelWidth + j % kPanelWidth;
    const float* row = j < N ? weight + j * K : nullptr;
    for (int64_t k = 0; k < K; ++k) col[k * kPanelWidth] = row != nullptr ? row[k] : 0.0f;
  }
  return p;
}

float PackedLinear::weight(int64_t k, int64_t j) const {
  return panels_.data()[((j / kPanelWidth) * K_ + k) * kPanelWidth + j % kPanelWidth];
}

PanelView PackedLinear::view() const {
  return PanelView{panels_.data(), has_bias_ ? bias_.data() : nullptr, K_, panel_count_};
}

void pack_rows(const float* x, int64_t M, int64_t K, int row_block, float* out) {
  for (int64_t r0 = 0; r0 < M; r0 += row_block) {
    const int64_t rows = std::min<int64_t>(row_block, M - r0);
    float* block = out + r0 * K;
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = x + (r0 + r) * K;
      for (int64_t k = 0; k < K; ++k) block[k * rows + r] = src[k];
    }
  }
}

void PackedLinear::apply(const KernelSet& kernels, const float* x, int64_t M, int64_t n_out, float* out,
                         ThreadTeam& team) const {
  std::vector<float> rows(static_cast<size_t>(M * K_));
  pack_rows(x, M, K_, kernels.row_block, rows.data());
  const PanelView w = view();
  const int64_t panels = panels_for(n_out);
  const int64_t units = (panels + kJobPanels - 1) / kJobPanels;
  // A few jobs per thread, so that a thread slowed by the machine leaves its share to the others.
  const int64_t jobs = team.size() == 1 ? 1 : std::min<int64_t>(units, 4 * team.size());
  team.run(static_cast<size_t>(jobs), [&](size_t j) {
    const int64_t begin = units * static_cast<int64_t>(j) / jobs * kJobPanels;
    const int64_t end = std::min(units * (static_cast<int64_t>(j) + 1) / jobs * kJobPanels, panels);
    kernels.linear(w, rows.data(), M, begin, end, n_out, out, n_out);
  });
}

}  // namespace genrepro::strict
