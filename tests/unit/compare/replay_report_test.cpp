// replay's text names steps as every other verb does, "new token N (steps[N-1])" (not
// "step 22"), on a hand-made report: the drift's max at steps[3], own pick parting at
// steps[5]. The engine's own replay: tests/unit/engine/replay_test.cpp.
#include "compare/replay_report.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ReplayText, StepsAreNewTokensCountedFromOne) {
  ReplayReport report;
  ReplayRun run;
  run.id = "exp/p0/greedy-1a2b3c4d";
  run.steps = 8;
  run.logp.add(0.5, 0.5 * 1.01, 3, 262);  // |Δ log p| = log 1.01 at steps[3]
  run.logp_unfiltered = run.logp;
  run.own_choice_diverges_at = 5;
  report.runs.push_back(run);
  report.logp = run.logp;
  report.logp_unfiltered = run.logp_unfiltered;
  report.max_run = run.id;
  const std::string text = format_replay_text(report);
  EXPECT_THAT(text, HasSubstr("(exp/p0/greedy-1a2b3c4d at new token 4 (steps[3]))"));
  EXPECT_THAT(text, HasSubstr("at token"));
  EXPECT_THAT(text, HasSubstr("token 6"));  // own pick: steps[5]
  EXPECT_THAT(text, Not(HasSubstr("step 3")));
  EXPECT_THAT(text, Not(HasSubstr("step 5")));
}

}  // namespace
}  // namespace genrepro
