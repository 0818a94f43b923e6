// What a CI log and a person read off diff: the environment ::warning annotation summarizes long
// values (cpu.flags was ~1.5 KB of words on one line) and names only the flags that differ;
// merged evidence from other machines is labelled by its runs' ids, not their indices; and the
// text lists the first few raw field differences per run, not twenty.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/diff_ci_report.hpp"
#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string many_flags(const std::string& extra) {
  std::string flags = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2";
  for (int i = 0; i < 150; ++i) flags += " feature" + std::to_string(i);
  return flags + extra;
}

TEST(CiNoise, EnvironmentWarningNamesTheDifferingFlagsNotTheWholeString) {
  EvidenceDiff d;
  d.evidence_file = "e.json";
  ValueDifference flags;
  flags.path = "environment.cpu.flags";
  flags.golden = many_flags(" avx512f avx512bw");
  flags.current = many_flags(" sse4a");
  ASSERT_GT(flags.golden.dump().size(), 1000u);
  ValueDifference model;
  model.path = "environment.cpu.model";
  model.golden = "Intel(R) Xeon(R) Platinum 8375C";
  model.current = "AMD EPYC 9R14";
  d.environment = {flags, model};
  const std::string lines = diff_to_github_annotations(d);
  EXPECT_LT(lines.size(), 500u) << lines;
  EXPECT_THAT(lines, HasSubstr("environment.cpu.flags: 3 of 174 -> 173 words differ; only in the golden: avx512f avx512bw; only in the new: sse4a"));
  EXPECT_THAT(lines, HasSubstr("environment.cpu.model: \"Intel(R) Xeon(R) Platinum 8375C\" -> \"AMD EPYC 9R14\""));
  EXPECT_THAT(lines, Not(HasSubstr("feature1")));
  // JUnit's <system-out> keeps every value whole.
  EXPECT_THAT(diff_to_junit(d), HasSubstr("feature149"));
}

TEST(CiNoise, OtherMachinesAreNamedByTheirRunIds) {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 5; ++i) runs.push_back(test::make_run("exp/p0/run" + std::to_string(i), DecodeMode::greedy, test::greedy_steps()));
  const Evidence golden = test::make_evidence(runs);
  Evidence merged = golden;
  RunEnvironment amd;
  amd.environment = golden.environment;
  amd.environment.cpu.model = "AMD EPYC 9R14";
  amd.runs = {1, 3};
  merged.run_environments = {amd};
  const EvidenceDiff d = diff_evidence({{"golden.json", golden}}, {"merged.json", merged}, {});
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_EQ(d.environment[0].path, "environment[runs exp/p0/run1, exp/p0/run3].cpu.model");
  EXPECT_THAT(format_diff_text(d), HasSubstr("environment[runs exp/p0/run1, exp/p0/run3].cpu.model: \"\" -> \"AMD EPYC 9R14\""));

  amd.runs = {0, 1, 2, 4};
  merged.run_environments = {amd};
  const EvidenceDiff many = diff_evidence({{"golden.json", golden}}, {"merged.json", merged}, {});
  ASSERT_EQ(many.environment.size(), 1u);
  EXPECT_EQ(many.environment[0].path, "environment[runs exp/p0/run0, exp/p0/run1, exp/p0/run2, ... (4 runs)].cpu.model");
}

TEST(CiNoise, TextListsTheFirstThreeFieldDifferencesOfARun) {
  RunDiff r;
  r.id = "exp/p0/x";
  r.verdict = Verdict::regression;
  r.reason = "the model's distribution changed";
  for (int i = 0; i < 20; ++i) {
    ValueDifference f;
    f.path = "steps[" + std::to_string(i) + "].prob";
    f.golden = 0.5;
    f.current = 0.6;
    f.abs_diff = 0.1;
    r.fields.push_back(f);
  }
  r.field_difference_count = 108;
  EvidenceDiff d;
  d.runs = {r};
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("  differences (108, first 3 listed; --json lists the first 20):\n"
                              "    steps[0].prob: 0.5 -> 0.6 (|d| 0.1)\n    steps[1].prob: 0.5 -> 0.6 (|d| 0.1)\n"
                              "    steps[2].prob: 0.5 -> 0.6 (|d| 0.1)\n"));
  EXPECT_THAT(text, Not(HasSubstr("steps[3].prob")));
}

}  // namespace
}  // namespace genrepro
