#pragma once
// A sensitivity matrix with one flip planted at a known step, for the gate's tests
// (fragility_test.cpp, report_fragility_test.cpp): run "b" is a near-tie at its step 1 and flips
// there in the matrix's cell "flip"; run "a" never flips. Built by the sensitivity code itself and
// written as sensitivity.json, so the tests read what `genrepro sensitivity` would write.
#include <string>
#include <vector>

#include "compare/sensitivity.hpp"
#include "support/scratch_dir.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/json_text.hpp"

namespace genrepro::test {

// Step 1 of run "b" is a near-tie in the reference (0.40 vs 0.39: logit margin ln(0.40/0.39) = 0.0253).
inline std::vector<StepRecord> near_tie_steps() {
  return {make_step(0, 10, {{10, 0.6}, {11, 0.3}}), make_step(1, 20, {{20, 0.40}, {21, 0.39}}),
          make_step(2, 30, {{30, 0.7}, {31, 0.2}})};
}

// b with its runner-up picked at step 1 (new token 2), and a different token after.
inline std::vector<StepRecord> b_flipped() {
  std::vector<StepRecord> s = near_tie_steps();
  s[1] = make_step(1, 21, {{21, 0.395}, {20, 0.394}});
  s[2] = make_step(2, 35, {{35, 0.5}, {36, 0.1}});
  return s;
}

// A matrix of three cells: the reference, one where nothing changes, one where b flips at new token 2.
inline std::string write_matrix(const ScratchDir& dir) {
  const RunRecord a = make_run("a", DecodeMode::greedy, greedy_steps());
  const RunRecord b = make_run("b", DecodeMode::greedy, near_tie_steps());
  std::vector<SensitivityCell> cells;
  cells.push_back({"ref", {{"threads", "1"}}, EvidenceFile{"ref.json", make_evidence({a, b})}});
  cells.push_back({"same", {{"threads", "2"}}, EvidenceFile{"same.json", make_evidence({a, b})}});
  cells.push_back({"flip", {{"threads", "3"}}, EvidenceFile{"flip.json", make_evidence({a, make_run("b", DecodeMode::greedy, b_flipped())})}});
  return dir.write("sensitivity.json", json_document_text(sensitivity_to_json(build_sensitivity(cells, 0))));
}

}  // namespace genrepro::test
