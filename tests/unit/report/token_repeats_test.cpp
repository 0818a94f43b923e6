// The one definition of a token repeat (report/token_repeats.hpp) that the greedy section and the
// grid summaries share: against a brute-force reference on thousands of random sequences (length,
// the earliest longest pair, the non-overlapping count), and through both of its users, whose
// numbers must therefore agree.
#include "report/token_repeats.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/grid_summary.hpp"
#include "report/report.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;

// O(n^3) by definition: the longest L with two equal spans [a, a+L) and [b, b+L), a + L <= b;
// among them the pair with the smallest a + L, then the smallest b + L (the earliest ends, the order
// the report has always named them in); the count greedily from the left.
TokenRepeat brute_force(const std::vector<int64_t>& ids) {
  TokenRepeat best;
  const size_t n = ids.size();
  for (size_t len = n / 2; len >= 1 && best.length == 0; --len) {
    bool found = false;
    for (size_t end_a = len; end_a <= n && !found; ++end_a) {
      for (size_t end_b = end_a + len; end_b <= n && !found; ++end_b) {
        if (std::equal(ids.begin() + (end_a - len), ids.begin() + end_a, ids.begin() + (end_b - len))) {
          best = TokenRepeat{len, end_a - len, end_b - len, 0};
          found = true;
        }
      }
    }
  }
  if (best.length == 0) return best;
  for (size_t at = 0; at + best.length <= n;) {
    bool same = true;
    for (size_t k = 0; k < best.length; ++k) same = same && ids[at + k] == ids[best.first + k];
    if (same) {
      ++best.count;
      at += best.length;
    } else {
      ++at;
    }
  }
  return best;
}

TEST(TokenRepeats, AgreesWithTheDefinitionOnRandomSequences) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 3000; ++trial) {
    const size_t n = rng() % 40;
    const int64_t alphabet = 1 + static_cast<int64_t>(rng() % 4);  // small alphabets: many repeats and ties
    std::vector<int64_t> ids(n);
    for (int64_t& id : ids) id = static_cast<int64_t>(rng() % static_cast<uint32_t>(alphabet));
    const TokenRepeat got = longest_repeat(ids), want = brute_force(ids);
    ASSERT_EQ(got.length, want.length) << "trial " << trial;
    if (want.length == 0) continue;
    ASSERT_EQ(got.first, want.first) << "trial " << trial;
    ASSERT_EQ(got.second, want.second) << "trial " << trial;
    ASSERT_EQ(got.count, want.count) << "trial " << trial;
    ASSERT_EQ(longest_repeat_length(ids), want.length) << "the grid summaries' figure, trial " << trial;
  }
}

TEST(TokenRepeats, Edges) {
  EXPECT_EQ(longest_repeat({}).length, 0u);
  EXPECT_EQ(longest_repeat({7}).length, 0u);
  EXPECT_EQ(longest_repeat({1, 2, 3}).count, 0u);
  const TokenRepeat ones = longest_repeat({1, 1, 1, 1, 1});  // "1 1" at 0 and 2; never overlapping
  EXPECT_EQ(ones.length, 2u);
  EXPECT_EQ(ones.first, 0u);
  EXPECT_EQ(ones.second, 2u);
  EXPECT_EQ(ones.count, 2u);
}

// The greedy section and the grid summary read the same numbers off the same run.
TEST(TokenRepeats, TheGreedySectionAndTheGridFigureAgree) {
  // 3 4 5 6 9 3 4 5 6 9 3 4 5 6: "3 4 5 6 9" twice, from new token 1 and 6; the count of that span is 2.
  const std::vector<int64_t> ids = {3, 4, 5, 6, 9, 3, 4, 5, 6, 9, 3, 4, 5, 6};
  std::vector<StepRecord> steps;
  for (size_t k = 0; k < ids.size(); ++k) steps.push_back(test::make_step(static_cast<int64_t>(k), ids[k], {{ids[k], 0.9}}));
  RunRecord r = test::make_run("greedy/p0/x", DecodeMode::greedy, steps);
  const Evidence e = test::make_evidence({r});
  const ReportContent c = build_report_content({ReportDocument{"e.json", e, ""}});
  std::string line;
  for (const ReportBlock& b : c.blocks)
    if (b.kind == ReportBlock::Kind::paragraph && b.text.rfind("Repetition:", 0) == 0) line = b.text;
  EXPECT_THAT(line, HasSubstr("Repetition: a span of 5 tokens occurs 2 times (from new token 1 and again from new token 6)"));
  EXPECT_EQ(run_figures(r).longest_repeat, 5u);
}

}  // namespace
}  // namespace genrepro
