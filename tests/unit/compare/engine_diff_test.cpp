// A run of genrepro's engine against the same run of llama.cpp's (docs/engines.md): diff pairs
// them by id and names the engine as the cause, whether the tokens part or only the
// probabilities moved; never a regression of the model.
#include <algorithm>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/evidence_diff.hpp"
#include "evidence/evidence.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;

const EvidenceFile& golden_file() {
  static const EvidenceFile f = read_evidence_file(std::string(GENREPRO_SOURCE_DIR) + "/tests/data/frameworks/golden.json");
  return f;
}

// The golden's runs as llama.cpp's engine would record them: the engine named, the first step's
// chosen probability moved by `dp`, and (optionally) the last token replaced.
EvidenceFile through_llama(double dp, bool last_token_differs) {
  EvidenceFile e = golden_file();
  for (RunRecord& r : e.evidence.runs) {
    r.params.engine = Engine::llama_cpp;
    if (!r.result.steps.empty()) r.result.steps[0].prob += dp;
    if (last_token_differs && !r.result.output_ids.empty()) {
      r.result.output_ids.back() += 1;
      std::optional<int64_t>& last = r.result.steps.back().token_id;
      if (last) *last += 1;
    }
  }
  return e;
}

TEST(EngineDiff, ProbabilitiesThatMoveAreTheEnginesNotARegression) {
  const EvidenceDiff d = diff_evidence({golden_file()}, through_llama(1e-3, false), {});
  ASSERT_FALSE(d.runs.empty());
  EXPECT_EQ(d.runs.size(), golden_file().evidence.runs.size()) << "every run pairs by id across engines";
  for (const RunDiff& r : d.runs) {
    EXPECT_EQ(r.verdict, Verdict::params_change) << r.id << ": " << r.reason;
    EXPECT_THAT(r.reason, HasSubstr("the engine differs (engine \"genrepro\" -> \"llama.cpp\")"));
    EXPECT_EQ(r.cause, "the engine differs: another forward pass computed the logits");
  }
}

TEST(EngineDiff, TheSameRunOnTheSameEngineAgrees) {
  EvidenceFile same = golden_file();
  const EvidenceDiff d = diff_evidence({golden_file()}, same, {});
  for (const RunDiff& r : d.runs) EXPECT_EQ(r.verdict, Verdict::agree) << r.id;
  const EvidenceDiff moved = diff_evidence({golden_file()}, through_llama(0, true), {});
  for (const RunDiff& r : moved.runs) EXPECT_THAT(r.reason, HasSubstr("the engine differs")) << r.id;
}

}  // namespace
}  // namespace genrepro
