// steps[].draw in the evidence: written after entropy only where a draw was recorded,
// read back as written, optional on read (evidence from before it reads and writes as ever), and
// refused with one-line messages where it cannot be what the writer made: a runner-up that is the
// chosen token or outside the vocabulary, a margin below 0 or not finite, one token kept, a draw
// in a run that takes the argmax, the other framework's rule, a runner-up with prob 0.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "evidence/evidence_consistency.hpp"
#include "evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using test::make_evidence;
using test::make_run;
using test::make_step;

// Three sampled steps, each with two drawable tokens and a race's record of the one that lost.
std::vector<StepRecord> sampled_steps(bool draws) {
  std::vector<StepRecord> steps = {make_step(0, 10, {{10, 0.6}, {11, 0.4}}, 2), make_step(1, 21, {{20, 0.5}, {21, 0.5}}, 2),
                                   make_step(2, 30, {{30, 0.7}, {31, 0.3}}, 2)};
  if (draws) {
    steps[0].draw = DrawRecord{DrawRule::exponential_race, 0.25, 11};
    steps[1].draw = DrawRecord{DrawRule::exponential_race, 0.0, 20};  // a tie broken by index order
    // steps[2]: none (a step may lack one, e.g. a ratio that left float32's range)
  }
  return steps;
}

Evidence sampled(bool draws) {
  Evidence e = make_evidence({make_run("exp/p0/a", DecodeMode::sample, sampled_steps(draws))});
  test::make_consistent(e);
  return e;
}

std::string error_of(const OrderedJson& j) {
  try {
    const Evidence e = evidence_from_json(j, "e.json");
    check_consistency(e, "e.json");
  } catch (const EvidenceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(DrawRecordEvidence, WrittenAfterEntropyAndReadBackBitForBit) {
  const OrderedJson j = evidence_to_json(sampled(true));
  const OrderedJson& step = j["runs"][0]["steps"][0];
  ASSERT_TRUE(step.contains("draw"));
  std::vector<std::string> keys;
  for (auto it = step.begin(); it != step.end(); ++it) keys.push_back(it.key());
  const auto at = std::find(keys.begin(), keys.end(), "draw");
  ASSERT_NE(at, keys.begin());
  EXPECT_EQ(*(at - 1), "entropy");
  EXPECT_EQ(step["draw"].dump(), R"({"rule":"exponential_race","margin":0.25,"runner_up":11})");
  EXPECT_FALSE(j["runs"][0]["steps"][2].contains("draw"));
  EXPECT_EQ(error_of(j), "(no error)");
  const Evidence back = evidence_from_json(OrderedJson::parse(j.dump()), "e.json");
  const auto& s = back.runs[0].result.steps;
  ASSERT_TRUE(s[0].draw && s[1].draw);
  EXPECT_EQ(s[0].draw->margin, 0.25);
  EXPECT_EQ(s[0].draw->runner_up, 11);
  EXPECT_EQ(s[1].draw->margin, 0.0);
  EXPECT_FALSE(s[2].draw.has_value());
  EXPECT_EQ(evidence_to_json(back).dump(), j.dump());
}

TEST(DrawRecordEvidence, EvidenceWithoutDrawsReadsAndWritesAsBefore) {
  const OrderedJson j = evidence_to_json(sampled(false));
  for (const auto& step : j["runs"][0]["steps"]) EXPECT_FALSE(step.contains("draw"));
  EXPECT_EQ(error_of(j), "(no error)");
  EXPECT_EQ(evidence_to_json(evidence_from_json(j, "e.json")).dump(), j.dump());
}

TEST(DrawRecordEvidence, ValuesOutOfRangeAreRefusedNamingPathAndAllowed) {
  const OrderedJson good = evidence_to_json(sampled(true));
  OrderedJson j = good;
  j["runs"][0]["steps"][0]["draw"]["runner_up"] = 10;  // the chosen token
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[0].draw.runner_up: found 10; allowed: a token other than token_id 10", 0), 0u)
      << error_of(j);
  j = good;
  j["runs"][0]["steps"][0]["draw"]["runner_up"] = 50257;
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[0].draw.runner_up: found 50257; allowed: a token id from 0 to 50256", 0), 0u)
      << error_of(j);
  j = good;
  j["runs"][0]["steps"][0]["draw"]["margin"] = -0.5;
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[0].draw.margin: found -0.5; allowed: a finite number >= 0", 0), 0u) << error_of(j);
  j = good;
  j["runs"][0]["steps"][0]["draw"]["margin"] = "Infinity";
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[0].draw.margin: found \"Infinity\"; allowed: a finite number >= 0", 0), 0u) << error_of(j);
  j = good;
  j["runs"][0]["steps"][0]["draw"]["rule"] = "coin";
  EXPECT_NE(error_of(j).find("runs[0].steps[0].draw.rule: expected \"exponential_race\" or \"inverse_cdf\""), std::string::npos)
      << error_of(j);
}

TEST(DrawRecordEvidence, ADrawTheRunCannotHaveMadeIsInconsistent) {
  const OrderedJson good = evidence_to_json(sampled(true));
  OrderedJson j = good;
  j["runs"][0]["steps"][0]["draw"]["rule"] = "inverse_cdf";  // llama.cpp's rule in an article run
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[0].draw.rule: found \"inverse_cdf\"; allowed: \"exponential_race\" "
                              "(params.framework article draws by it)", 0),
            0u)
      << error_of(j);
  j = good;
  j["runs"][0]["steps"][0]["top"][1]["prob"] = 0.0;  // the runner-up filtered out, one token kept
  j["runs"][0]["steps"][0]["kept"] = 1;
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[0].kept: found 1; allowed: at least 2 at a step with a draw record", 0), 0u)
      << error_of(j);
  j["runs"][0]["steps"][0]["kept"] = 2;
  const std::string e = error_of(j);
  EXPECT_NE(e.find("runs[0].steps[0].draw.runner_up: found 11, whose top[1].prob is 0; allowed: a token with probability > 0"),
            std::string::npos)
      << e;
}

TEST(DrawRecordEvidence, ARunThatTakesTheArgmaxHasNoDraw) {
  // Temperature 0 samples nothing (the argmax of softmax(logits)), though its mode is "sample".
  RunRecord r = make_run("exp/p0/t0", DecodeMode::sample, sampled_steps(true));
  r.params.sampling.temperature = 0;
  Evidence e = make_evidence({r});
  test::make_consistent(e);
  const std::string err = error_of(evidence_to_json(e));
  EXPECT_NE(err.find("runs[0].steps[0].draw: present; allowed: none (the run picks the argmax: greedy, or temperature 0)"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace genrepro
