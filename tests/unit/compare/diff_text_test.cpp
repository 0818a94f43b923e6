// diff's text for many differing runs (grouped by cause), --brief (one line per run that parted)
// and whole checksums (30 regressions once took 744 lines, and a sha256 was cut in the
// middle). Hand-made runs: 12 with one regression of the same kind at different steps, 1 with
// another cause.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;

constexpr int kSameCause = 12;  // more than the 10 above which the text groups

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::size_t lines_of(const std::string& text) { return count_of(text, "\n"); }

// Golden: kSameCause + 1 greedy runs. New: the first kSameCause have a moved distribution at one
// step (a regression: the best candidate moves to 0.55 with the same temperature), the last picks the runner-up of an
// unchanged distribution (the picker changed).
EvidenceDiff many_regressions() {
  std::vector<RunRecord> golden, current;
  for (int i = 0; i <= kSameCause; ++i) {
    const std::string id = "exp/p0/run" + std::to_string(i);
    golden.push_back(make_run(id, DecodeMode::greedy, greedy_steps()));
    std::vector<StepRecord> steps = greedy_steps();
    if (i < kSameCause)
      steps[static_cast<std::size_t>(i % 3)] = make_step(i % 3, steps[static_cast<std::size_t>(i % 3)].token_id.value(),
                                                         {{*steps[static_cast<std::size_t>(i % 3)].token_id, 0.55}, {99, 0.3}});
    else
      steps[2] = make_step(2, 31, {{30, 0.7}, {31, 0.2}});
    current.push_back(make_run(id, DecodeMode::greedy, steps));
  }
  Evidence g = make_evidence(golden), n = make_evidence(current);
  n.model.files["model.safetensors"].sha256 = std::string(64, 'b');
  return diff_evidence({EvidenceFile{"golden.json", g}}, EvidenceFile{"new.json", n}, EvidenceDiffOptions{});
}

TEST(DiffText, ManyRegressionsAreGroupedByCause) {
  const EvidenceDiff d = many_regressions();
  ASSERT_EQ(d.count(Verdict::regression), static_cast<std::size_t>(kSameCause));
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("regression (12 runs): the model's distribution changed beyond tolerance with the same temperature\n"));
  EXPECT_THAT(text, HasSubstr("sampler/RNG change (1 run): the same distribution gave another token: the picker changed\n"));
  EXPECT_THAT(text, HasSubstr("  and 11 more run(s) with this cause:\n"));
  // One full block per cause ("why:" is its second line), one line for each further run.
  EXPECT_EQ(count_of(text, "  why: "), 2u) << text;
  EXPECT_EQ(count_of(text, "    run exp/p0/run"), 11u) << text;
  EXPECT_THAT(text, HasSubstr("    run exp/p0/run4: regression at new token 2 (steps[1])\n"));
  // Every differing run is still named.
  for (int i = 0; i <= kSameCause; ++i) EXPECT_THAT(text, HasSubstr("exp/p0/run" + std::to_string(i) + ":"));
}

TEST(DiffText, ChecksumsAreShownWhole) {
  const std::string text = format_diff_text(many_regressions());
  EXPECT_THAT(text, HasSubstr("model.files.model.safetensors.sha256: \"" + std::string(64, 'a') + "\" -> \"" + std::string(64, 'b') + "\"\n"));
  EXPECT_THAT(text, Not(HasSubstr("chars)")));
}

TEST(DiffText, BriefIsOneLinePerRunThatPartedAndTheSummary) {
  const EvidenceDiff d = many_regressions();
  const std::string brief = format_diff_brief(d);
  // 13 runs, the context count line, the summary.
  EXPECT_EQ(lines_of(brief), static_cast<std::size_t>(kSameCause + 1 + 2)) << brief;
  EXPECT_THAT(brief, HasSubstr("run exp/p0/run12: sampler/RNG change at new token 3 (steps[2]): golden 30 \" t30\", new 31 \" t31\"\n"));
  EXPECT_THAT(brief, HasSubstr("numerics, environment, provenance: 0, 0, 1 difference(s)"));
  EXPECT_THAT(brief, HasSubstr(diff_summary_line(d) + "\n"));
}

// Ten or fewer differing runs keep one full block each, as before.
TEST(DiffText, FewRunsAreShownInFull) {
  std::vector<StepRecord> changed = greedy_steps();
  changed[2] = make_step(2, 31, {{30, 0.7}, {31, 0.2}});
  const EvidenceDiff d = diff_evidence({EvidenceFile{"g", make_evidence({make_run("a", DecodeMode::greedy, greedy_steps())})}},
                                       EvidenceFile{"n", make_evidence({make_run("a", DecodeMode::greedy, changed)})}, {});
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("run a: sampler/RNG change at new token 3 (steps[2])\n  why: "));
  EXPECT_THAT(text, Not(HasSubstr("(1 run)")));
}

}  // namespace
}  // namespace genrepro
