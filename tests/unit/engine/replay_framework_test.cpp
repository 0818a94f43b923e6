// replay of framework runs on the tiny fixture: Hugging Face and llama.cpp runs whose
// stages read the history (penalties, n-gram bans) replay through their own chain, fed the golden
// prefix, with zero drift and the same stage counts; a tampered probability, a tampered penalty
// and a tampered history each show where they were made; a tampered stage count is shown and does
// not by itself fail. The golden is made by the runner (the loop) in the test.
#include "engine/replay.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "unit/engine/replay_golden_suite.hpp"

#include "engine/runner.hpp"
#include "evidence/evidence.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

constexpr double kPerturbation = 0.01;  // in log p: far above float32 drift, far below a probability's range
constexpr double kPerturbationTolerance = 1e-12;
constexpr int64_t kSteps = 8;

constexpr const char* kExperiment = R"({
  "name": "replay-frameworks", "prompts": ["the river bank was"], "max_new_tokens": 8, "stop_at_eos": false,
  "runs": [{"mode": "sample", "framework": "hf", "repetition_penalty": 1.3, "top_k": 20, "temperature": 0.9, "seed": 5,
            "use_cache": [false, true]},
           {"mode": "greedy", "framework": "hf", "no_repeat_ngram_size": 2},
           {"mode": "sample", "framework": "llama.cpp", "repeat_penalty": 1.3, "frequency_penalty": 0.3,
            "presence_penalty": 0.2, "seed": 11},
           {"mode": "greedy", "framework": "llama.cpp", "repeat_penalty": 1.5},
           {"mode": "sample", "framework": "hf", "typical_p": 0.9, "min_p": 0.05, "seed": 1, "max_new_tokens": 0},
           {"mode": "sample", "framework": "llama.cpp", "seed": 1, "max_new_tokens": 0}],
  "record": {"top_candidates": 5}
})";

struct ReplayFrameworkExperiment {
  static constexpr const char* kName = "replay_framework";
  static constexpr const char* kExperiment = genrepro::kExperiment;
};

class ReplayFramework : public test::ReplayGoldenSuite<ReplayFrameworkExperiment> {
 protected:
  static size_t hf_penalty_recompute(const Evidence& e) {
    return run_where(e, [](const RunParams& p) { return p.sampling.controls.repetition_penalty == 1.3 && !p.use_cache; });
  }
  static size_t llama_penalties(const Evidence& e) {
    return run_where(e, [](const RunParams& p) { return p.sampling.controls.frequency_penalty == 0.3; });
  }
};

TEST_F(ReplayFramework, FrameworkRunsReplayWithZeroDriftAndTheirStageCounts) {
  const auto g = golden();
  const std::vector<RunRecord>& runs = g.front().evidence.runs;
  ASSERT_EQ(runs.size(), 7u);
  for (const RunRecord& r : runs) ASSERT_NE(r.params.sampling.framework, Framework::article) << r.id;
  const ReplayReport report = replay_golden(g, options());
  EXPECT_TRUE(report.within()) << format_replay_text(report);
  EXPECT_EQ(report.logp.max, 0.0);
  EXPECT_EQ(report.logp_unfiltered.max, 0.0);
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const ReplayRun& r = report.runs[i];
    SCOPED_TRACE(r.id);
    EXPECT_EQ(r.logp.max, 0.0);
    EXPECT_EQ(r.logp.infinite, 0);
    EXPECT_FALSE(r.own_choice_diverges_at) << "this build picks another token at step " << *r.own_choice_diverges_at;
    EXPECT_EQ(r.stage_steps_differing, 0);
    EXPECT_FALSE(r.first_stage_difference);
    if (r.first_prediction) {
      EXPECT_EQ(r.stage_steps_compared, 1);
      EXPECT_EQ(r.logp_unfiltered.compared, 5);
      EXPECT_GE(r.logp.compared, 1);
    } else {
      EXPECT_EQ(r.steps, kSteps);
      EXPECT_EQ(r.logp.compared, kSteps);
      EXPECT_EQ(r.stage_steps_compared, kSteps);
    }
  }
  EXPECT_EQ(format_replay_text(report).find("stages: "), std::string::npos) << "no stage line when the counts agree";
}

// The framework chain is what replay runs: the run's own penalty, not the article's chain (which
// would give this run's golden probabilities a large drift) and not another penalty.
TEST_F(ReplayFramework, AnotherPenaltyIsCaughtFromTheFirstStepItActs) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = hf_penalty_recompute(doc);
  doc.runs[run].params.sampling.controls.repetition_penalty = 1.0;  // as if the golden had no penalty
  const ReplayReport report = replay_golden(g, options());
  const ReplayRun& r = report.runs[run];
  EXPECT_FALSE(r.within(kDefaultLogProbTolerance)) << format_replay_text(report);
  EXPECT_TRUE(r.logp.max > 1e-3 || r.logp.infinite > 0) << format_replay_text(report);
  EXPECT_EQ(r.logp_unfiltered.max, 0.0) << "prob_t1 is the model's: no chain touches it";
  EXPECT_EQ(report.beyond_tolerance(), 1u);
}

TEST_F(ReplayFramework, ATamperedProbabilityOfAPenalisedRunShowsAsThatDriftAtThatStep) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = llama_penalties(doc);
  constexpr int64_t kStep = 5;
  double& prob = doc.runs[run].result.steps[kStep].prob;
  prob = prob * std::exp(-kPerturbation);
  const ReplayReport report = replay_golden(g, options());
  const ReplayRun& r = report.runs[run];
  EXPECT_NEAR(r.logp.max, kPerturbation, kPerturbationTolerance);
  ASSERT_TRUE(r.logp.max_step);
  EXPECT_EQ(*r.logp.max_step, kStep);
  EXPECT_EQ(r.logp.sum, r.logp.max) << "every other step drifts by exactly 0";
  EXPECT_FALSE(r.within(kDefaultLogProbTolerance));
  EXPECT_EQ(report.beyond_tolerance(), 1u);
  EXPECT_FALSE(r.own_choice_diverges_at);
  const std::string text = format_replay_text(report);
  EXPECT_NE(text.find("BEYOND"), std::string::npos) << text;
  EXPECT_NE(text.find("1 beyond"), std::string::npos) << text;
}

// Teacher forcing feeds the golden tokens as the history: another token at step 2 changes what
// the penalties see from step 3 on, and replay measures it there (not before).
TEST_F(ReplayFramework, TheHistoryIsTheGoldensTokens) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = llama_penalties(doc);
  RunRecord& rec = doc.runs[run];
  // Swap in the step's second candidate: the golden now says it picked that token.
  StepRecord& s = rec.result.steps[2];
  const Candidate& other = s.top[0].id == *s.token_id ? s.top[1] : s.top[0];
  rec.result.output_ids[2] = other.id;
  s.token_id = other.id;
  s.prob = other.prob;
  const ReplayReport report = replay_golden(g, options());
  const ReplayRun& r = report.runs[run];
  ASSERT_TRUE(r.own_choice_diverges_at);
  EXPECT_EQ(*r.own_choice_diverges_at, 2) << "this build's own draw at step 2 is the original token";
  EXPECT_FALSE(r.within(kDefaultLogProbTolerance)) << format_replay_text(report);
  ASSERT_TRUE(r.logp.max_step);
  EXPECT_GT(*r.logp.max_step, 2);
}

// A stage count that differs is shown (text and JSON), and is not by itself a failure.
TEST_F(ReplayFramework, ATamperedStageCountIsShownNotFailed) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = hf_penalty_recompute(doc);
  StepRecord& s = doc.runs[run].result.steps[4];
  ASSERT_EQ(s.stages.front().stage, "repetition_penalty");
  --s.stages.front().kept;
  const ReplayReport report = replay_golden(g, options());
  const ReplayRun& r = report.runs[run];
  EXPECT_TRUE(r.within(kDefaultLogProbTolerance));
  EXPECT_EQ(r.stage_steps_differing, 1);
  ASSERT_TRUE(r.first_stage_difference);
  EXPECT_EQ(r.first_stage_difference->step, 4);
  EXPECT_EQ(r.first_stage_difference->stage, "repetition_penalty");
  EXPECT_EQ(*r.first_stage_difference->golden_kept + 1, *r.first_stage_difference->now_kept);
  const std::string text = format_replay_text(report);
  EXPECT_NE(text.find("stages: " + r.id + ": 1 of 8 steps keep other counts; first at new token 5 (steps[4]), stage repetition_penalty"),
            std::string::npos)
      << text;
  const OrderedJson j = replay_to_json(report);
  EXPECT_EQ(j["runs"][run]["stages"]["steps_differing"], 1);
  EXPECT_EQ(j["runs"][run]["stages"]["first_difference"]["stage"], "repetition_penalty");
}

}  // namespace
}  // namespace genrepro
