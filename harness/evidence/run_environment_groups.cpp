#include "evidence/run_environment_groups.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "evidence/value_text.hpp"

namespace genrepro {

namespace {

using EnvironmentLeaves = std::vector<std::pair<std::string, const OrderedJson*>>;

// Every leaf of the environment block by its dotted path; an empty object is a leaf.
void environment_leaves(const OrderedJson& j, const std::string& path, EnvironmentLeaves& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) environment_leaves(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  out.emplace_back(path, &j);
}

// How many runs ran together says nothing about the numbers (strip_volatile drops it too).
bool is_volatile_environment_field(const std::string& field) { return field == "threads.runs_concurrently"; }

// The reference's leaves in order, then the leaves only `env` has.
std::vector<EnvironmentFieldDifference> environment_differences(const OrderedJson& reference, const OrderedJson& env) {
  EnvironmentLeaves ref_leaves, env_leaves;
  environment_leaves(reference, "", ref_leaves);
  environment_leaves(env, "", env_leaves);
  const std::map<std::string, const OrderedJson*> by_path(env_leaves.begin(), env_leaves.end());
  std::set<std::string> seen;
  std::vector<EnvironmentFieldDifference> out;
  for (const auto& [field, ref_value] : ref_leaves) {
    seen.insert(field);
    if (is_volatile_environment_field(field)) continue;
    const auto it = by_path.find(field);
    const OrderedJson value = it == by_path.end() ? OrderedJson() : *it->second;
    if (*ref_value != value) out.push_back({field, *ref_value, value});
  }
  for (const auto& [field, value] : env_leaves)
    if (!seen.count(field) && !is_volatile_environment_field(field)) out.push_back({field, OrderedJson(), *value});
  return out;
}

}  // namespace

std::vector<RunEnvironmentGroup> run_environment_groups(const Evidence& evidence, const Environment& reference) {
  const OrderedJson reference_json = environment_to_json(reference);
  std::set<int64_t> elsewhere;
  for (const RunEnvironment& re : evidence.run_environments) elsewhere.insert(re.runs.begin(), re.runs.end());
  RunEnvironmentGroup own;
  for (const RunRecord& r : evidence.runs)
    if (!elsewhere.count(r.index)) own.runs.push_back(r.index);
  std::sort(own.runs.begin(), own.runs.end());
  std::vector<RunEnvironmentGroup> groups;
  if (!own.runs.empty() || evidence.runs.empty()) {
    own.differences = environment_differences(reference_json, environment_to_json(evidence.environment));
    groups.push_back(std::move(own));
  }
  for (std::size_t i = 0; i < evidence.run_environments.size(); ++i) {
    const RunEnvironment& re = evidence.run_environments[i];
    RunEnvironmentGroup g;
    g.number = i + 2;
    g.runs = re.runs;
    std::sort(g.runs.begin(), g.runs.end());
    g.differences = environment_differences(reference_json, environment_to_json(re.environment));
    groups.push_back(std::move(g));
  }
  return groups;
}

const RunEnvironmentGroup* group_of_run(const std::vector<RunEnvironmentGroup>& groups, int64_t index) {
  for (const RunEnvironmentGroup& g : groups)
    if (std::binary_search(g.runs.begin(), g.runs.end(), index)) return &g;
  return nullptr;
}

bool any_environment_differs(const std::vector<RunEnvironmentGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(), [](const RunEnvironmentGroup& g) { return !g.differences.empty(); });
}

std::string runs_text(const std::vector<int64_t>& runs, std::size_t shown) {
  std::string text = runs.size() == 1 ? "run " : "runs ";
  for (std::size_t i = 0; i < runs.size() && i < shown; ++i) text += (i ? ", " : "") + std::to_string(runs[i]);
  if (runs.size() > shown) text += ", ... (" + std::to_string(runs.size()) + " runs)";
  if (runs.empty()) text += "(none)";
  return text;
}

std::string differences_text(const std::vector<EnvironmentFieldDifference>& differences, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < differences.size() && i < shown; ++i)
    text += (i ? "; " : "") + differences[i].field + " " + show_value(differences[i].value);
  if (differences.size() > shown) text += "; and " + std::to_string(differences.size() - shown) + " more";
  return text;
}

}  // namespace genrepro
