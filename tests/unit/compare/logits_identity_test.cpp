// The logits digests in diff: whether two runs' logits were bit-identical at every step, by their steps'
// logits digests (true / false at the first differing step / null without digests or across
// algorithms), beside the verdict and never changing it; the text says so in one clause of the
// summary line only when runs agree within the tolerance on other logits, and is otherwise byte
// for byte what it was.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "evidence/evidence.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;

std::vector<StepRecord> with_digests(std::vector<StepRecord> steps, const std::string& salt = "0") {
  for (std::size_t k = 0; k < steps.size(); ++k) steps[k].logits_digest = "xxh64:" + std::string(14, '0') + salt + std::to_string(k);
  return steps;
}

Evidence doc(const std::vector<StepRecord>& steps) { return make_evidence({make_run("a", DecodeMode::greedy, steps)}); }

EvidenceDiff diff_docs(const Evidence& golden, const Evidence& current) {
  return diff_evidence({EvidenceFile{"golden.json", golden}}, EvidenceFile{"new.json", current}, EvidenceDiffOptions{});
}

TEST(LogitsIdentity, EqualDigestsAtEveryStepAreBitIdentical) {
  const EvidenceDiff d = diff_docs(doc(with_digests(greedy_steps())), doc(with_digests(greedy_steps())));
  ASSERT_EQ(d.runs.size(), 1u);
  EXPECT_EQ(d.runs[0].logits_identical, true);
  EXPECT_FALSE(d.runs[0].logits_first_difference_step.has_value());
  EXPECT_EQ(diff_summary_line(d), "diff: 1 runs compared, 1 agree, 0 differ; 0 missing, 0 extra; prob tolerance 0.0001");
  const OrderedJson j = diff_to_json(d);
  EXPECT_EQ(j["runs"][0]["logits_identical"], true);
  EXPECT_TRUE(j["runs"][0]["logits_first_difference_step"].is_null());
}

TEST(LogitsIdentity, OtherBitsBelowTheCandidatesAgreeAndSayItOnce) {
  // Every recorded value equal; only the logits digest of new token 2 differs: what the recorded
  // candidates cannot show (a logit below them moved).
  std::vector<StepRecord> other = with_digests(greedy_steps());
  other[1].logits_digest = "xxh64:ffffffffffffffff";
  const Evidence golden = doc(with_digests(greedy_steps()));
  const EvidenceDiff d = diff_docs(golden, doc(other));
  ASSERT_EQ(d.runs.size(), 1u);
  EXPECT_EQ(d.runs[0].verdict, Verdict::agree);  // the gate is tolerance-based, as ever
  EXPECT_TRUE(d.agree());
  EXPECT_EQ(d.runs[0].logits_identical, false);
  EXPECT_EQ(d.runs[0].logits_first_difference_step, 1);
  EXPECT_EQ(diff_summary_line(d),
            "diff: 1 runs compared, 1 agree, 0 differ; 0 missing, 0 extra; 1 of the agreeing runs with logits not bit-identical "
            "(logits digests); prob tolerance 0.0001");
  const OrderedJson j = diff_to_json(d);
  EXPECT_EQ(j["runs"][0]["logits_identical"], false);
  EXPECT_EQ(j["runs"][0]["logits_first_difference_step"], 1);
  EXPECT_EQ(j["agree"], true);
}

TEST(LogitsIdentity, ARunThatDiffersIsNotCountedInTheClause) {
  std::vector<StepRecord> changed = with_digests(greedy_steps(), "1");
  changed[2] = make_step(2, 31, {{30, 0.7}, {31, 0.2}});
  changed[2].logits_digest = "xxh64:0000000000000012";
  const EvidenceDiff d = diff_docs(doc(with_digests(greedy_steps())), doc(changed));
  ASSERT_EQ(d.runs.size(), 1u);
  EXPECT_NE(d.runs[0].verdict, Verdict::agree);
  EXPECT_EQ(d.runs[0].logits_identical, false);
  EXPECT_EQ(d.runs[0].logits_first_difference_step, 0);  // every step is compared, not only up to the divergence
  EXPECT_EQ(diff_summary_line(d).find("bit-identical"), std::string::npos) << diff_summary_line(d);
}

TEST(LogitsIdentity, NullWithoutDigestsOnEitherSideOrAcrossAlgorithms) {
  const Evidence with = doc(with_digests(greedy_steps()));
  const Evidence without = doc(greedy_steps());
  for (const auto& [g, n] : {std::pair{&with, &without}, std::pair{&without, &with}, std::pair{&without, &without}}) {
    const EvidenceDiff d = diff_docs(*g, *n);
    ASSERT_EQ(d.runs.size(), 1u);
    EXPECT_FALSE(d.runs[0].logits_identical.has_value());
    EXPECT_TRUE(diff_to_json(d)["runs"][0]["logits_identical"].is_null());
    EXPECT_EQ(diff_summary_line(d), "diff: 1 runs compared, 1 agree, 0 differ; 0 missing, 0 extra; prob tolerance 0.0001");
  }
  // Another algorithm's digests are never "other bits": not comparable.
  std::vector<StepRecord> sha = greedy_steps();
  for (StepRecord& s : sha) s.logits_digest = "sha256:" + std::string(64, 'a');
  EXPECT_FALSE(diff_docs(with, doc(sha)).runs[0].logits_identical.has_value());
}

TEST(LogitsIdentity, ARunWithMoreStepsIsNotIdenticalFromItsFirstExtraStep) {
  std::vector<StepRecord> longer = with_digests(greedy_steps());
  longer.push_back(make_step(3, 40, {{40, 0.6}, {41, 0.3}}));
  longer.back().logits_digest = "xxh64:0000000000000003";
  const RunDiff r = diff_run(make_run("a", DecodeMode::greedy, with_digests(greedy_steps())),
                             make_run("a", DecodeMode::greedy, longer), kDefaultProbTolerance);
  EXPECT_EQ(r.logits_identical, false);
  EXPECT_EQ(r.logits_first_difference_step, 3);
}

}  // namespace
}  // namespace genrepro
