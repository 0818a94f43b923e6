#pragma once
// Token ids in an open-addressed table keyed by a string each id spells (its bytes, or its byte
// symbols), at most half full so probe runs stay short. The strings live with their owner; the
// table holds ids only (-1: empty), and every lookup is handed the owner's id -> string.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace genrepro {

class IdSlots {
 public:
  static constexpr int32_t kNone = -1;

  // Room for ids 0..count-1 (clears what was there).
  void reset(size_t count) {
    size_t slot_count = 1;
    while (slot_count < 2 * count) slot_count *= 2;
    slots_.assign(slot_count, kNone);
  }

  // The id whose spelling is `key`, or kNone.
  template <class SpellingOf>
  int32_t find(std::string_view key, const SpellingOf& spelling_of) const {
    if (slots_.empty()) return kNone;
    const size_t mask = slots_.size() - 1;
    for (size_t slot = std::hash<std::string_view>{}(key) & mask;; slot = (slot + 1) & mask) {
      const int32_t id = slots_[slot];
      if (id == kNone || spelling_of(id) == key) return id;
    }
  }

  // Adds `id` spelled `key`; false, and nothing added, when another id is spelled the same.
  template <class SpellingOf>
  bool insert(int32_t id, std::string_view key, const SpellingOf& spelling_of) {
    const size_t mask = slots_.size() - 1;
    for (size_t slot = std::hash<std::string_view>{}(key) & mask;; slot = (slot + 1) & mask) {
      if (slots_[slot] == kNone) {
        slots_[slot] = id;
        return true;
      }
      if (spelling_of(slots_[slot]) == key) return false;
    }
  }

 private:
  std::vector<int32_t> slots_;
};

}  // namespace genrepro
