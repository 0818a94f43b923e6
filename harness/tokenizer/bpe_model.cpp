#include "tokenizer/bpe_model.hpp"

#include <functional>
#include <queue>

namespace genrepro {

namespace {

constexpr int32_t kNone = -1;

// One symbol of the word being merged; merged symbols are absorbed into their left neighbour.
struct Symbol {
  int32_t id = kNone;  // kNone once absorbed
  int32_t prev = kNone;
  int32_t next = kNone;
};

// An adjacent pair that has a merge, as it was when found. It is stale if either side has
// changed since (checked when popped), which is cheaper than removing it from the heap.
struct Candidate {
  int32_t rank;
  int32_t left;  // position of the left symbol: orders equal ranks left to right
  int32_t left_id;
  int32_t right_id;
  int32_t merged_id;
  bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
};

}  // namespace

void BpeModel::reserve_tokens(size_t count) {
  token_bytes.assign(count, std::string());
  id_slots_.reset(count);
}

bool BpeModel::add_token(int32_t id, std::string bytes) {
  if (!id_slots_.insert(id, bytes, [this](int32_t i) { return std::string_view(token_bytes[i]); })) return false;
  token_bytes[id] = std::move(bytes);
  return true;
}

int32_t BpeModel::id_of(std::string_view bytes) const {
  return id_slots_.find(bytes, [this](int32_t i) { return std::string_view(token_bytes[i]); });
}

void BpeModel::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  const auto n = static_cast<int32_t>(word.size());
  if (n == 0) return;
  std::vector<Symbol> symbols(n);
  for (int32_t i = 0; i < n; ++i) {
    symbols[i] = {byte_ids[static_cast<uint8_t>(word[i])], i - 1, i + 1 < n ? i + 1 : kNone};
  }

  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  std::vector<Candidate> found_this_round;
  const auto find_pair = [&](int32_t left, auto& into) {
    if (left == kNone) return;
    const int32_t right = symbols[left].next;
    if (right == kNone) return;
    const BpeMerge* merge = merges.find(pair_key(symbols[left].id, symbols[right].id));
    if (merge == nullptr) return;
    into.push_back({merge->rank, left, symbols[left].id, symbols[right].id, merge->merged_id});
  };
  std::vector<Candidate> initial;
  for (int32_t i = 0; i + 1 < n; ++i) find_pair(i, initial);
  for (const Candidate& c : initial) heap.push(c);

  // One round per rank, as in encoder.py: every occurrence of the lowest-ranked pair present at
  // the start of the round is merged before pairs the round creates are considered, even if a
  // (malformed) merges file gave such a new pair a lower rank.
  while (!heap.empty()) {
    const int32_t round_rank = heap.top().rank;
    while (!heap.empty() && heap.top().rank == round_rank) {
      const Candidate c = heap.top();
      heap.pop();
      Symbol& left = symbols[c.left];
      if (left.id != c.left_id || left.next == kNone) continue;
      Symbol& right = symbols[left.next];
      if (right.id != c.right_id) continue;
      left.id = c.merged_id;
      left.next = right.next;
      if (right.next != kNone) symbols[right.next].prev = c.left;
      right.id = kNone;
      find_pair(left.prev, found_this_round);
      find_pair(c.left, found_this_round);
    }
    for (const Candidate& c : found_this_round) heap.push(c);
    found_this_round.clear();
  }

  for (int32_t i = 0; i != kNone; i = symbols[i].next) out.push_back(symbols[i].id);
}

}  // namespace genrepro
