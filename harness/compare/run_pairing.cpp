// Pairing runs whose ids differ by the experiment cell they ran (run_pairing.hpp).
#include "compare/run_pairing.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "compare/compared_params.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// The keys that are not params: where a run sits in its experiment.
const std::vector<std::string> kPlaceKeys = {"experiment", "prompt", "position"};

std::string joined(const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s;
}

// Each run's place among its experiment's runs of the same prompt, in expansion order (index).
std::map<const RunRecord*, std::size_t> positions(const std::vector<const RunRecord*>& runs) {
  std::vector<const RunRecord*> sorted = runs;
  std::stable_sort(sorted.begin(), sorted.end(), [](const RunRecord* a, const RunRecord* b) { return a->index < b->index; });
  std::map<std::pair<std::string, int64_t>, std::size_t> next;
  std::map<const RunRecord*, std::size_t> out;
  for (const RunRecord* r : sorted) out[r] = next[{r->experiment, r->prompt_index}]++;
  return out;
}

// The values of `keys` for one run, as one comparable string (JSON text of each value). Every
// run has every params key (compared_params), so a framework key pairs runs of any framework.
std::string key_of(const RunRecord& r, std::size_t position, const std::vector<std::string>& keys) {
  const OrderedJson params = compared_params(r.params);
  std::string k;
  for (const std::string& key : keys) {
    OrderedJson v;
    if (key == "experiment") v = r.experiment;
    else if (key == "prompt") v = r.prompt_index;
    else if (key == "position") v = position;
    else v = params.at(key);
    k += v.dump() + '\x1f';
  }
  return k;
}

// Unmatched runs of one side by key; a key two runs share maps to nullptr (ambiguous).
std::map<std::string, const RunRecord*> unmatched_by_key(const std::vector<const RunRecord*>& side,
                                                         const std::set<std::string>& other_ids,
                                                         const std::vector<std::string>& keys) {
  const std::map<const RunRecord*, std::size_t> pos = positions(side);
  std::map<std::string, const RunRecord*> out;
  for (const RunRecord* r : side) {
    if (other_ids.count(r->id)) continue;
    const auto [it, fresh] = out.emplace(key_of(*r, pos.at(r), keys), r);
    if (!fresh) it->second = nullptr;
  }
  return out;
}

std::set<std::string> ids(const std::vector<const RunRecord*>& runs) {
  std::set<std::string> out;
  for (const RunRecord* r : runs) out.insert(r->id);
  return out;
}

}  // namespace

std::vector<std::string> pair_keys_allowed() {
  // The article's keys as evidence writes them, then the frameworks' (as a message lists them).
  std::vector<std::string> keys = kPlaceKeys;
  for (const std::string& k : compared_param_keys())
    if (!is_framework_key(k)) keys.push_back(k);
  for (const std::string& k : compared_param_keys())
    if (is_framework_key(k)) keys.push_back(k);
  return keys;
}

std::vector<std::string> parse_pair_by(const std::string& list, const std::string& flag) {
  const std::vector<std::string> allowed = pair_keys_allowed();
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string key = list.substr(start, comma - start);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw UsageError(flag + " " + list + ": unknown key \"" + key + "\"; allowed (comma-separated): " + joined(allowed));
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      throw UsageError(flag + " " + list + ": key \"" + key + "\" is given twice; allowed (comma-separated): " + joined(allowed));
    keys.push_back(key);
    start = comma + 1;
  }
  return keys;
}

std::vector<RunPair> pair_runs(const std::vector<const RunRecord*>& golden, const std::vector<const RunRecord*>& current,
                               const std::vector<std::string>& keys) {
  const std::map<std::string, const RunRecord*> g = unmatched_by_key(golden, ids(current), keys);
  const std::map<std::string, const RunRecord*> n = unmatched_by_key(current, ids(golden), keys);
  const std::map<const RunRecord*, std::size_t> gpos = positions(golden);
  std::vector<RunPair> pairs;
  for (const RunRecord* r : golden) {
    const auto gi = gpos.find(r);
    const std::string k = key_of(*r, gi->second, keys);
    const auto gk = g.find(k);
    if (gk == g.end() || gk->second != r) continue;  // matched by id, or ambiguous on golden's side
    const auto nk = n.find(k);
    if (nk == n.end() || nk->second == nullptr) continue;
    pairs.push_back({r, nk->second});
  }
  return pairs;
}

}  // namespace genrepro
