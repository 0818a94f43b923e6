#pragma once
// The ranked merges, (left id, right id) -> merge, in an open-addressed table kept at most half
// full. Every load fills it with GPT-2's 50,000 pairs and every word looks up each adjacent pair:
// a node map allocated a node per merge, a third of a load's time.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace genrepro {

struct BpeMerge {
  int32_t rank = 0;       // line order in merges.txt: lower merges first
  int32_t merged_id = 0;  // the token the pair becomes
};

class MergeTable {
 public:
  // Empties the table, keeping its room.
  void clear() {
    for (Slot& s : slots_) s.key = kEmpty;
    size_ = 0;
  }

  // Room for `count` merges without growing.
  void reserve(size_t count) {
    if (2 * count > slots_.size()) rehash(2 * count);
  }

  // Adds `merge` under `key` unless the key is there: the merge the table holds for `key`, and
  // whether it was added.
  std::pair<const BpeMerge*, bool> emplace(uint64_t key, BpeMerge merge) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * (size_ + 1));
    Slot& s = slots_[index_of(key)];
    if (s.key == key) return {&s.merge, false};
    s = Slot{key, merge};
    ++size_;
    return {&s.merge, true};
  }

  // The merge under `key`, or nullptr.
  const BpeMerge* find(uint64_t key) const {
    if (slots_.empty()) return nullptr;
    const Slot& s = slots_[index_of(key)];
    return s.key == key ? &s.merge : nullptr;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  // BpeModel::pair_key puts a non-negative id in the high half, so no key has every bit set.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key = kEmpty;
    BpeMerge merge;
  };

  // Fibonacci hashing: the product's top bits index the table (keys differ mostly in low bits).
  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }

  // The slot holding `key`, or the empty slot where it would go (the table is never full).
  size_t index_of(uint64_t key) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = home(key);; i = (i + 1) & mask)
      if (slots_[i].key == key || slots_[i].key == kEmpty) return i;
  }

  void rehash(size_t at_least) {
    size_t count = 16;
    int bits = 4;
    while (count < at_least) count *= 2, ++bits;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(count, Slot{});
    shift_ = 64 - bits;
    for (const Slot& s : old)
      if (s.key != kEmpty) slots_[index_of(s.key)] = s;
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  int shift_ = 64;
};

}  // namespace genrepro
