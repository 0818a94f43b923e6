#pragma once
// Which runs of an evidence file ran where, and where each of those environments differs from a
// reference one (the golden's, or the evidence's own). Merged evidence from mixed machines holds
// several environments (run_environments, docs/evidence-format.md); report and check-article
// name each run's environment where it differs, as diff does. No libtorch.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// One field of an environment, as a path inside the environment block ("cpu.model",
// "blas.core"), with the reference's value and this environment's (null where absent).
struct EnvironmentFieldDifference {
  std::string field;
  OrderedJson reference;
  OrderedJson value;
};

// The runs that ran in one environment of an evidence file.
struct RunEnvironmentGroup {
  // 1 is the evidence's own `environment`; 2, 3, ... are run_environments[0], [1], ... So the
  // number names the same environment in every output made from one file.
  std::size_t number = 1;
  std::vector<int64_t> runs;  // run indices (RunRecord::index), ascending
  // Where it differs from the reference, in the environment block's order; volatile fields
  // (threads.runs_concurrently) never count.
  std::vector<EnvironmentFieldDifference> differences;
};

// Every environment the evidence's runs ran in, the evidence's own first (its runs: those no
// run_environments entry lists; it is left out when every run is listed elsewhere), each
// compared with `reference`.
std::vector<RunEnvironmentGroup> run_environment_groups(const Evidence& evidence, const Environment& reference);

// The group that run `index` ran in; nullptr when no group lists it.
const RunEnvironmentGroup* group_of_run(const std::vector<RunEnvironmentGroup>& groups, int64_t index);

// True when some group differs from the reference.
bool any_environment_differs(const std::vector<RunEnvironmentGroup>& groups);

// "run 3", "runs 1, 3, 5", "runs 0, 2, 4, 6, 8, 10, ... (30 runs)": at most `shown` indices.
inline constexpr std::size_t kShownRunIndices = 8;
std::string runs_text(const std::vector<int64_t>& runs, std::size_t shown = kShownRunIndices);

// The differences on one line, each value cut short (show_value): `cpu.model "AMD EPYC 9R14";
// blas.core "Zen"`; after `shown` fields, "; and N more".
inline constexpr std::size_t kShownFields = 4;
std::string differences_text(const std::vector<EnvironmentFieldDifference>& differences, std::size_t shown = kShownFields);

}  // namespace genrepro
