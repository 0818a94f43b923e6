// The regression gate's fragility labels (diff --sensitivity): a matrix built by the sensitivity
// code from hand-made cells with a flip planted at a known step, written as sensitivity.json and
// read back, against golden and new evidence whose divergences are planted too. Every label, margin
// and count below can be checked on paper.
#include "compare/fragility.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/diff_ci_report.hpp"
#include "compare/sensitivity.hpp"
#include "unit/compare/planted_flip.hpp"
#include "support/scratch_dir.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;
using test::b_flipped;
using test::near_tie_steps;
using test::write_matrix;

constexpr DecodeMode kGreedy = DecodeMode::greedy;

struct Gate {
  EvidenceDiff diff;
  std::vector<RunFragility> labels;
};

Gate gate(const std::vector<RunRecord>& golden_runs, const std::vector<RunRecord>& new_runs, const FragilityKnowledge& k) {
  const std::vector<EvidenceFile> golden{EvidenceFile{"golden.json", make_evidence(golden_runs)}};
  const EvidenceFile current{"new.json", make_evidence(new_runs)};
  Gate g;
  g.diff = diff_evidence(golden, current, EvidenceDiffOptions{});
  g.labels = label_divergences(g.diff, golden, current, k);
  return g;
}

TEST(Fragility, TheMatrixIsReadBackWithItsFlipsAndMStar) {
  const test::ScratchDir dir("fragility");
  const FragilityKnowledge k = read_fragility(write_matrix(dir));
  EXPECT_EQ(k.compared_cells, 2u);
  EXPECT_EQ(k.known_runs, 2u);
  ASSERT_TRUE(k.m_star.has_value());
  EXPECT_NEAR(*k.m_star, std::log(0.40 / 0.39), 1e-12);
  ASSERT_EQ(k.flips.count("b"), 1u);
  ASSERT_EQ(k.flips.at("b").count(2), 1u);  // new token 2
  EXPECT_EQ(k.flips.at("b").at(2), (std::vector<std::string>{"flip"}));
  EXPECT_TRUE(k.flips.at("a").empty());
}

TEST(Fragility, AFlipTheMatrixSawIsKnownFragileAndOnlyThatPassesWithAllowFragile) {
  const test::ScratchDir dir("fragility");
  const FragilityKnowledge k = read_fragility(write_matrix(dir));
  const RunRecord a = make_run("a", kGreedy, greedy_steps());
  const RunRecord b = make_run("b", kGreedy, near_tie_steps());
  const Gate g = gate({a, b}, {a, make_run("b", kGreedy, b_flipped())}, k);
  ASSERT_FALSE(g.diff.agree());
  ASSERT_EQ(g.labels.size(), 1u);
  const RunFragility& f = g.labels[0];
  EXPECT_EQ(f.id, "b");
  EXPECT_EQ(f.new_token, 2);
  EXPECT_EQ(f.label, FragilityLabel::known_fragile);
  ASSERT_TRUE(f.golden_logit_margin.has_value());
  EXPECT_NEAR(*f.golden_logit_margin, std::log(0.40 / 0.39), 1e-12);
  EXPECT_EQ(f.flipped_cells, (std::vector<std::string>{"flip"}));
  EXPECT_EQ(f.why, "logit margin 0.0253 <= m* 0.0253; flipped there in 1 of 2 cells");
  EXPECT_TRUE(only_known_fragile(g.diff, g.labels));

  const std::string text = format_fragility_text(k, g.labels);
  EXPECT_NE(text.find("b: new token 2: known-fragile (logit margin 0.0253 <= m* 0.0253; flipped there in 1 of 2 cells)"),
            std::string::npos)
      << text;
  const OrderedJson j = fragility_to_json(k, g.labels);
  EXPECT_EQ(j["runs"][0]["label"], "known_fragile");
  EXPECT_EQ(j["runs"][0]["new_token"], 2);
}

TEST(Fragility, JunitAndAnnotationsCarryTheLabelAndAnExcusedRunIsASkipAndAWarning) {
  const test::ScratchDir dir("fragility");
  const FragilityKnowledge k = read_fragility(write_matrix(dir));
  const RunRecord a = make_run("a", kGreedy, greedy_steps());
  const RunRecord b = make_run("b", kGreedy, near_tie_steps());
  const Gate g = gate({a, b}, {a, make_run("b", kGreedy, b_flipped())}, k);
  ASSERT_EQ(g.labels.size(), 1u);
  CiFragility ci;
  ci.label_of_run["b"] = std::string(to_string(g.labels[0].label)) + " (" + g.labels[0].why + ")";
  const std::string label = "; numerics: known-fragile (logit margin 0.0253 &lt;= m* 0.0253; flipped there in 1 of 2 cells)";

  const std::string failing = diff_to_junit(g.diff, ci);
  EXPECT_NE(failing.find("failures=\"1\" errors=\"0\" skipped=\"0\""), std::string::npos) << failing;
  EXPECT_NE(failing.find("<failure type=\""), std::string::npos) << failing;
  EXPECT_NE(failing.find(label + "\">"), std::string::npos) << failing;
  EXPECT_NE(diff_to_github_annotations(g.diff, ci).find("::error file="), std::string::npos);

  ci.excused = true;  // --allow-fragile passed the gate
  const std::string excused = diff_to_junit(g.diff, ci);
  EXPECT_NE(excused.find("failures=\"0\" errors=\"0\" skipped=\"1\""), std::string::npos) << excused;
  EXPECT_EQ(excused.find("<failure"), std::string::npos) << excused;
  EXPECT_NE(excused.find("<skipped message=\"run b: "), std::string::npos) << excused;
  EXPECT_NE(excused.find(label + "\"/>"), std::string::npos) << excused;
  const std::string notes = diff_to_github_annotations(g.diff, ci);
  EXPECT_EQ(notes.find("::error"), std::string::npos) << notes;
  EXPECT_NE(notes.find("::warning file="), std::string::npos) << notes;
  EXPECT_NE(notes.find("numerics: known-fragile (logit margin 0.0253 <= m* 0.0253"), std::string::npos) << notes;
}

TEST(Fragility, ALargeMarginDivergenceIsUnexpectedAndFailsEvenWithAllowFragile) {
  const test::ScratchDir dir("fragility");
  const FragilityKnowledge k = read_fragility(write_matrix(dir));
  const RunRecord a = make_run("a", kGreedy, greedy_steps());
  const RunRecord b = make_run("b", kGreedy, near_tie_steps());
  // a parts at new token 3, where the golden's margin is ln(0.7/0.2) = 1.25, far above m*.
  std::vector<StepRecord> a_changed = greedy_steps();
  a_changed[2] = make_step(2, 31, {{31, 0.7}, {30, 0.2}});
  const Gate g = gate({a, b}, {make_run("a", kGreedy, a_changed), b}, k);
  ASSERT_EQ(g.labels.size(), 1u);
  EXPECT_EQ(g.labels[0].id, "a");
  EXPECT_EQ(g.labels[0].new_token, 3);
  EXPECT_EQ(g.labels[0].label, FragilityLabel::unexpected);
  EXPECT_EQ(g.labels[0].why, "logit margin 1.25 > m* 0.0253; no cell of the matrix flipped it there");
  EXPECT_FALSE(only_known_fragile(g.diff, g.labels));

  // Both at once: one unexpected divergence is enough to fail.
  const Gate both = gate({a, b}, {make_run("a", kGreedy, a_changed), make_run("b", kGreedy, b_flipped())}, k);
  ASSERT_EQ(both.labels.size(), 2u);
  EXPECT_FALSE(only_known_fragile(both.diff, both.labels));
}

TEST(Fragility, ARunTheMatrixNeverSawIsJudgedByItsMarginAlone) {
  const test::ScratchDir dir("fragility");
  const FragilityKnowledge k = read_fragility(write_matrix(dir));
  // c's step 0 is a near-tie (0.41 vs 0.40: margin 0.0247 <= m* 0.0253); the matrix has no run c.
  const std::vector<StepRecord> c_steps = {make_step(0, 40, {{40, 0.41}, {41, 0.40}})};
  const std::vector<StepRecord> c_flipped = {make_step(0, 41, {{41, 0.41}, {40, 0.40}})};
  const Gate g = gate({make_run("c", kGreedy, c_steps)}, {make_run("c", kGreedy, c_flipped)}, k);
  ASSERT_EQ(g.labels.size(), 1u);
  EXPECT_EQ(g.labels[0].label, FragilityLabel::known_fragile);
  EXPECT_TRUE(g.labels[0].flipped_cells.empty());
  EXPECT_EQ(g.labels[0].why, "logit margin 0.0247 <= m* 0.0253; no cell of the matrix flipped it there");
}

TEST(Fragility, MissingRunsAndProbabilityDriftAreNotExcusedByTheLabels) {
  const test::ScratchDir dir("fragility");
  const FragilityKnowledge k = read_fragility(write_matrix(dir));
  const RunRecord a = make_run("a", kGreedy, greedy_steps());
  const RunRecord b = make_run("b", kGreedy, near_tie_steps());
  // b flipped (known-fragile) but a is missing from the new evidence.
  const Gate missing = gate({a, b}, {make_run("b", kGreedy, b_flipped())}, k);
  ASSERT_EQ(missing.labels.size(), 1u);
  EXPECT_EQ(missing.labels[0].label, FragilityLabel::known_fragile);
  EXPECT_FALSE(only_known_fragile(missing.diff, missing.labels));
  // Same tokens, a probability moved by 1e-3 (beyond the tolerance): a difference, but no flip to label.
  std::vector<StepRecord> drifted = greedy_steps();
  drifted[1].top[1].prob += 1e-3;
  drifted[1].top[1].prob_scaled += 1e-3;
  const Gate drift = gate({a, b}, {make_run("a", kGreedy, drifted), b}, k);
  ASSERT_FALSE(drift.diff.agree());
  EXPECT_TRUE(drift.labels.empty());
  EXPECT_FALSE(only_known_fragile(drift.diff, drift.labels));
}

TEST(Fragility, AFileThatIsNotAMatrixIsOneErrorNamingThePath) {
  const test::ScratchDir dir("fragility");
  const auto error_of = [&](const std::string& text) {
    try {
      read_fragility(dir.write("m.json", text));
    } catch (const EvidenceError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  const std::string file = dir / "m.json";
  const std::string hint = "; give the sensitivity.json that `genrepro sensitivity --out DIR` wrote (docs/sensitivity.md)";
  EXPECT_EQ(error_of(R"({"schema": "genrepro.evidence/3"})"), file + ": schema: is \"genrepro.evidence/3\", expected \"genrepro.sensitivity/1\"" + hint);
  EXPECT_EQ(error_of(R"({"schema": "genrepro.sensitivity/1"})"), file + ": cells: missing" + hint);
  const std::string head = R"({"schema": "genrepro.sensitivity/1", "reference": "ref", "cells": [{}, {}], "predictor": {"m_star": )";
  EXPECT_EQ(error_of(head + R"(-1}, "runs": []})"), file + ": predictor.m_star: is -1, expected a margin >= 0 or null" + hint);
  EXPECT_EQ(error_of(head + R"(null}, "runs": [{"id": "a", "cells": {"x": {"class": "diverged", "new_token": 0}}}]})"),
            file + ": runs[0].cells.x.new_token: is 0, expected an integer >= 1" + hint);
  EXPECT_EQ(error_of(head + R"(null}, "runs": [{"id": "a", "cells": {"x": {"class": "flipped"}}}]})"),
            file + ": runs[0].cells.x.class: is \"flipped\"; allowed: identical, same_tokens, diverged, missing" + hint);
  EXPECT_EQ(error_of("{not json").rfind(file + ": invalid JSON: parse error at line 1, column 3", 0), 0u);
  EXPECT_EQ(error_of(head + R"(null}, "runs": []})"), "(no error)");
}

}  // namespace
}  // namespace genrepro
