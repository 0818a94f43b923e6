// What a sensitivity matrix may be trusted with: diff --allow-fragile reads m* from
// sensitivity.json, so an m* that no flip in the file supports is refused; a step whose logits
// digests are by different algorithms proves nothing about the logits, either way.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/fragility.hpp"
#include "compare/sensitivity.hpp"
#include "support/scratch_dir.hpp"
#include "unit/compare/planted_flip.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;

std::string error_of(const std::string& path) {
  try {
    read_fragility(path);
  } catch (const EvidenceError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(FragilityTrust, AnMStarNoFlipSupportsIsRefused) {
  const test::ScratchDir dir("mstar");
  const std::string head = R"({"schema": "genrepro.sensitivity/1", "reference": "ref", "cells": [{"name": "ref"}, {"name": "x"}], "predictor": {"m_star": )";
  const std::string agree = R"(}, "runs": [{"id": "a", "cells": {"ref": {"class": "identical"}, "x": {"class": "identical"}}}]})";
  // No cell flipped anything, yet m* = 5 would call every divergence below 5 known-fragile.
  const std::string forged = dir.write("forged.json", head + "5" + agree);
  EXPECT_NE(error_of(forged).find("predictor.m_star: is 5, but no flip in runs[] has a reference_decisive_margin to support it; allowed: null"),
            std::string::npos)
      << error_of(forged);
  EXPECT_EQ(error_of(dir.write("null.json", head + "null" + agree)), "(accepted)");
  const std::string flip = R"(}, "runs": [{"id": "a", "cells": {"ref": {"class": "identical"}, "x": {"class": "diverged", "new_token": 2, "reference_decisive_margin": 0.01}}}]})";
  EXPECT_NE(error_of(dir.write("larger.json", head + "5" + flip)).find("predictor.m_star: is 5; allowed: 0.01 (the largest"), std::string::npos);
  EXPECT_NE(error_of(dir.write("missing.json", head + "null" + flip)).find("predictor.m_star: is null; allowed: 0.01"), std::string::npos);
  EXPECT_EQ(error_of(dir.write("fits.json", head + "0.01" + flip)), "(accepted)");
  // The reference never diverges from itself.
  const std::string self = R"(}, "runs": [{"id": "a", "cells": {"ref": {"class": "diverged", "new_token": 1, "reference_decisive_margin": 5}}}]})";
  EXPECT_NE(error_of(dir.write("self.json", head + "5" + self)).find("runs[0].cells.ref.class: is \"diverged\" in the reference cell"),
            std::string::npos);
  // What `genrepro sensitivity` writes is read as before.
  EXPECT_EQ(error_of(test::write_matrix(dir)), "(accepted)");
}

TEST(SensitivityTrust, DigestsOfAnotherAlgorithmAtSomeStepProveNothing) {
  std::vector<StepRecord> ref_steps = greedy_steps(), cell_steps = greedy_steps();
  for (std::size_t k = 0; k < ref_steps.size(); ++k) {
    ref_steps[k].logits_digest = "xxh64:00000000000000" + std::to_string(10 + k);
    cell_steps[k].logits_digest = ref_steps[k].logits_digest;
  }
  // The same logits, but one cell's step 1 was digested by another (later) algorithm.
  cell_steps[1].logits_digest = "blake3:0123456789abcdef0123456789abcdef";
  std::vector<SensitivityCell> cells;
  cells.push_back({"ref", {{"threads", "1"}}, EvidenceFile{"ref.json", make_evidence({make_run("a", DecodeMode::greedy, ref_steps)})}});
  cells.push_back({"other", {{"threads", "2"}}, EvidenceFile{"other.json", make_evidence({make_run("a", DecodeMode::greedy, cell_steps)})}});
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  EXPECT_EQ(m.runs[0][1].cls, CellClass::identical);
  EXPECT_EQ(m.runs[0][1].logits, LogitsCheck::not_recorded);
  // With one algorithm throughout, equal digests prove the logits equal.
  cells[1].evidence.evidence.runs[0].result.steps[1].logits_digest = ref_steps[1].logits_digest;
  EXPECT_EQ(build_sensitivity(cells, 0).runs[0][1].logits, LogitsCheck::equal);
}

}  // namespace
}  // namespace genrepro
