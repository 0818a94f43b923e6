#include "sampling/candidates.hpp"

#include <algorithm>
#include <cmath>

namespace genrepro::sampling {

Candidates::Candidates(const float* logits, size_t n) : storage_(n) {
  for (size_t i = 0; i < n; ++i) storage_[i] = Candidate{static_cast<int32_t>(i), logits[i], 0.0f};
  data = storage_.data();
  size = n;
}

// A copy points into its own storage, at the same offset.
Candidates::Candidates(const Candidates& other)
    : size(other.size), selected(other.selected), sorted(other.sorted), storage_(other.storage_) {
  data = storage_.data() + (other.data - other.storage_.data());
}

Candidates& Candidates::operator=(const Candidates& other) {
  if (this == &other) return *this;
  storage_ = other.storage_;
  data = storage_.data() + (other.data - other.storage_.data());
  size = other.size;
  selected = other.selected;
  sorted = other.sorted;
  return *this;
}

int64_t Candidates::finite_count() const {
  int64_t n = 0;
  for (size_t i = 0; i < size; ++i) n += data[i].logit != -INFINITY ? 1 : 0;
  return n;
}

std::vector<int32_t> Candidates::finite_ids() const {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < size; ++i)
    if (data[i].logit != -INFINITY) ids.push_back(data[i].id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace genrepro::sampling
