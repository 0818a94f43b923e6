// Which runs of an evidence file ran where, and where each environment differs from a reference:
// what report and check-article show for merged evidence from mixed machines.
#include "evidence/run_environment_groups.hpp"

#include <gtest/gtest.h>

#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

// Six greedy runs (indices 0..5) in one environment.
Evidence six_runs() {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 6; ++i) runs.push_back(test::make_run("r" + std::to_string(i), DecodeMode::greedy, test::greedy_steps()));
  Evidence e = test::make_evidence(runs);
  e.environment.cpu.model = "Intel(R) Xeon(R) Platinum 8375C";
  e.environment.blas.core = "Haswell";
  return e;
}

// Runs 1, 3, 5 merged from a shard of an AMD machine.
Evidence merged_from_amd() {
  Evidence e = six_runs();
  RunEnvironment amd{e.environment, {1, 3, 5}};
  amd.environment.cpu.model = "AMD EPYC 9R14";
  amd.environment.cpu.flags = "fpu sse2 avx avx2 fma";
  e.run_environments.push_back(amd);
  return e;
}

TEST(RunEnvironmentGroups, NamesWhichRunsRanWhereAndEachFieldThatDiffers) {
  const Evidence e = merged_from_amd();
  const std::vector<RunEnvironmentGroup> groups = run_environment_groups(e, e.environment);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].number, 1u);
  EXPECT_EQ(groups[0].runs, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_TRUE(groups[0].differences.empty());
  EXPECT_EQ(groups[1].number, 2u);
  EXPECT_EQ(groups[1].runs, (std::vector<int64_t>{1, 3, 5}));
  ASSERT_EQ(groups[1].differences.size(), 2u);
  EXPECT_EQ(groups[1].differences[0].field, "cpu.model");
  EXPECT_EQ(groups[1].differences[0].reference, "Intel(R) Xeon(R) Platinum 8375C");
  EXPECT_EQ(groups[1].differences[0].value, "AMD EPYC 9R14");
  EXPECT_EQ(groups[1].differences[1].field, "cpu.flags");
  EXPECT_TRUE(any_environment_differs(groups));
  EXPECT_EQ(group_of_run(groups, 3)->number, 2u);
  EXPECT_EQ(group_of_run(groups, 4)->number, 1u);
  EXPECT_EQ(group_of_run(groups, 9), nullptr);
}

// Against a golden made on a third machine both environments differ, each in its own fields.
TEST(RunEnvironmentGroups, AgainstAnotherReferenceEveryEnvironmentIsCompared) {
  const Evidence e = merged_from_amd();
  Environment golden = e.environment;
  golden.blas.core = "SkylakeX";
  const std::vector<RunEnvironmentGroup> groups = run_environment_groups(e, golden);
  ASSERT_EQ(groups.size(), 2u);
  ASSERT_EQ(groups[0].differences.size(), 1u);
  EXPECT_EQ(groups[0].differences[0].field, "blas.core");
  EXPECT_EQ(groups[0].differences[0].reference, "SkylakeX");
  EXPECT_EQ(groups[0].differences[0].value, "Haswell");
  ASSERT_EQ(groups[1].differences.size(), 3u);  // blas.core, cpu.model, cpu.flags
  EXPECT_EQ(groups[1].differences[0].field, "blas.core");
}

TEST(RunEnvironmentGroups, HowManyRunsRanTogetherIsNoDifference) {
  Evidence e = six_runs();
  RunEnvironment other{e.environment, {2}};
  other.environment.threads.runs_concurrently = 4;
  e.run_environments.push_back(other);
  EXPECT_FALSE(any_environment_differs(run_environment_groups(e, e.environment)));
}

// One environment: one group holding every run, equal to itself.
TEST(RunEnvironmentGroups, EvidenceOfOneMachineIsOneGroup) {
  const Evidence e = six_runs();
  const std::vector<RunEnvironmentGroup> groups = run_environment_groups(e, e.environment);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].runs.size(), 6u);
  EXPECT_FALSE(any_environment_differs(groups));
}

TEST(RunEnvironmentGroups, RunListsAndDifferencesReadAsOneLine) {
  EXPECT_EQ(runs_text({3}), "run 3");
  EXPECT_EQ(runs_text({1, 3, 5}), "runs 1, 3, 5");
  EXPECT_EQ(runs_text({0, 1, 2, 3, 4}, 3), "runs 0, 1, 2, ... (5 runs)");
  const Evidence e = merged_from_amd();
  const std::vector<RunEnvironmentGroup> groups = run_environment_groups(e, e.environment);
  EXPECT_EQ(differences_text(groups[1].differences), "cpu.model \"AMD EPYC 9R14\"; cpu.flags \"fpu sse2 avx avx2 fma\"");
  EXPECT_EQ(differences_text(groups[1].differences, 1), "cpu.model \"AMD EPYC 9R14\"; and 1 more");
}

}  // namespace
}  // namespace genrepro
