// Pairing runs across a parameter change (compare/run_pairing.hpp) and what diff says about a
// pair (describe_pair): on hand-made runs whose keys and kept sizes can be checked on paper.
// The 2 x 3 x 5 grid on the fixture model: tests/cli_inprocess/diff_pairing_test.cpp.
#include "compare/run_pairing.hpp"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;

const std::vector<std::string> kDefaultKeys = {"experiment", "prompt", "seed", "position"};

// A sampled run at (prompt, seed, index) with top_p; the id says which, as a run id would.
RunRecord cell(int64_t prompt, uint64_t seed, int64_t index, double top_p, std::vector<StepRecord> steps = greedy_steps()) {
  RunRecord r = make_run("exp/p" + std::to_string(prompt) + "/s" + std::to_string(seed) + "-p" + std::to_string(top_p),
                         DecodeMode::sample, steps);
  r.prompt_index = prompt;
  r.index = index;
  r.params.sampling.seed = seed;
  r.params.sampling.top_p = top_p;
  return r;
}

std::vector<const RunRecord*> ptrs(const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> out;
  for (const RunRecord& r : runs) out.push_back(&r);
  return out;
}

std::vector<std::pair<std::string, std::string>> ids(const std::vector<RunPair>& pairs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const RunPair& p : pairs) out.emplace_back(p.golden->id, p.current->id);
  return out;
}

TEST(RunPairing, ChangedTopPPairsEachCellWithItsSuccessor) {
  const std::vector<RunRecord> g = {cell(0, 1, 0, 0.9), cell(0, 2, 1, 0.9), cell(1, 1, 2, 0.9)};
  // The new side in another order: pairing goes by the cell, not by the order of the file.
  const std::vector<RunRecord> n = {cell(1, 1, 2, 0.95), cell(0, 2, 1, 0.95), cell(0, 1, 0, 0.95)};
  EXPECT_EQ(ids(pair_runs(ptrs(g), ptrs(n), kDefaultKeys)),
            (std::vector<std::pair<std::string, std::string>>{{g[0].id, n[2].id}, {g[1].id, n[1].id}, {g[2].id, n[0].id}}));
}

TEST(RunPairing, RunsMatchedByIdAreNotPaired) {
  const std::vector<RunRecord> g = {cell(0, 1, 0, 0.9), cell(0, 2, 1, 0.9)};
  const std::vector<RunRecord> n = {cell(0, 1, 0, 0.9), cell(0, 2, 1, 0.95)};
  EXPECT_EQ(ids(pair_runs(ptrs(g), ptrs(n), kDefaultKeys)),
            (std::vector<std::pair<std::string, std::string>>{{g[1].id, n[1].id}}));
}

// Position counts every run of a prompt, so a changed second run keeps its place beside an
// unchanged first one; pairing by position alone then tells the two cells apart.
TEST(RunPairing, PositionCountsEveryRunOfThePrompt) {
  const std::vector<RunRecord> g = {cell(0, 7, 0, 0.9), cell(0, 7, 1, 0.8), cell(0, 7, 2, 0.7)};
  const std::vector<RunRecord> n = {cell(0, 7, 0, 0.9), cell(0, 7, 1, 0.85), cell(0, 7, 2, 0.75)};
  EXPECT_EQ(ids(pair_runs(ptrs(g), ptrs(n), kDefaultKeys)),
            (std::vector<std::pair<std::string, std::string>>{{g[1].id, n[1].id}, {g[2].id, n[2].id}}));
}

// Two unmatched golden runs share the key: which one the new run replaced is a guess, so
// neither pairs; the third cell, one-to-one, still does.
TEST(RunPairing, AmbiguousKeysPairNothing) {
  const std::vector<RunRecord> g = {cell(0, 1, 0, 0.9), cell(0, 1, 1, 0.8), cell(1, 1, 2, 0.9)};
  const std::vector<RunRecord> n = {cell(0, 1, 0, 0.95), cell(1, 1, 2, 0.95)};
  EXPECT_EQ(ids(pair_runs(ptrs(g), ptrs(n), {"experiment", "prompt", "seed"})),
            (std::vector<std::pair<std::string, std::string>>{{g[2].id, n[1].id}}));
}

TEST(RunPairing, PairByIsCheckedKeyByKey) {
  EXPECT_EQ(parse_pair_by("experiment,prompt,temperature", "--pair-by"),
            (std::vector<std::string>{"experiment", "prompt", "temperature"}));
  try {
    parse_pair_by("experiment,colour", "--pair-by");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--pair-by experiment,colour: unknown key \"colour\"; allowed (comma-separated): experiment, prompt, position, mode,"));
  }
  EXPECT_THROW(parse_pair_by("seed,seed", "--pair-by"), UsageError);
  EXPECT_THROW(parse_pair_by("", "--pair-by"), UsageError);
  EXPECT_THROW(parse_pair_by("seed,", "--pair-by"), UsageError);
}

// The pair's verdict, its first divergence, the nucleus sizes and the stop, counted by hand:
// golden keeps 2, 3, 4 and new 5, 6, 7 tokens; they part at new token 2 (steps[1]), so the
// shared context is new tokens 1-2: means 2.5 and 5.5; medians over each run 3 and 6.
TEST(RunPairing, DescribePairNamesTheChangeAndItsEffect) {
  const std::vector<StepRecord> gs = {make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 2), make_step(1, 20, {{20, 0.5}, {21, 0.2}}, 3),
                                      make_step(2, 30, {{30, 0.7}, {31, 0.2}}, 4)};
  const std::vector<StepRecord> ns = {make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 5), make_step(1, 21, {{20, 0.5}, {21, 0.2}}, 6),
                                      make_step(2, 30, {{30, 0.7}, {31, 0.2}}, 7)};
  const RunRecord g = cell(0, 1, 0, 0.9, gs), n = cell(0, 1, 0, 0.95, ns);
  const PairedRun p = describe_pair(g, n, kDefaultProbTolerance);
  EXPECT_EQ(pair_verdict(p), "parameter change: top_p 0.9 \u2192 0.95");
  ASSERT_TRUE(p.diff.divergence.has_value());
  EXPECT_EQ(p.diff.divergence->step, 1);
  EXPECT_EQ(p.diff.verdict, Verdict::kept_set_change);
  EXPECT_EQ(p.shared_steps, 2u);
  EXPECT_DOUBLE_EQ(p.golden_kept_mean, 2.5);
  EXPECT_DOUBLE_EQ(p.new_kept_mean, 5.5);
  EXPECT_DOUBLE_EQ(*p.golden_kept_median, 3);
  EXPECT_DOUBLE_EQ(*p.new_kept_median, 6);

  // Through diff_evidence: out of missing and extra, into pairs; the gate still fails.
  const EvidenceDiff d = diff_evidence({EvidenceFile{"golden.json", make_evidence({g})}}, EvidenceFile{"new.json", make_evidence({n})},
                                       EvidenceDiffOptions{kDefaultProbTolerance, kDefaultKeys});
  EXPECT_FALSE(d.agree());
  EXPECT_TRUE(d.missing.empty());
  EXPECT_TRUE(d.extra.empty());
  ASSERT_EQ(d.pairs.size(), 1u);
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("paired run " + g.id + " \u2192 " + n.id + "\n"));
  EXPECT_THAT(text, HasSubstr("parts at new token 2 (steps[1]): golden 20 \" t20\" p 0.5, new 21 \" t21\" p 0.2 (kept-set change)"));
  EXPECT_THAT(text, HasSubstr("nucleus (kept): mean 2.5 \u2192 5.5 over new tokens 1-2 (same context), median 3 \u2192 6 over each run; "
                              "stop: the same (max_new_tokens after 3 new tokens)"));
  // Without keys, the old behaviour: one missing, one extra.
  const EvidenceDiff by_id = diff_evidence({EvidenceFile{"golden.json", make_evidence({g})}}, EvidenceFile{"new.json", make_evidence({n})},
                                           EvidenceDiffOptions{kDefaultProbTolerance});
  EXPECT_EQ(by_id.missing.size(), 1u);
  EXPECT_EQ(by_id.extra.size(), 1u);
  EXPECT_TRUE(by_id.pairs.empty());
}

}  // namespace
}  // namespace genrepro
