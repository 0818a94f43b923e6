// The A/B report's excerpt marks each stretch of differing tokens once (⟦ t5 t6⟧), not every
// token after the runs part (⟦ t5⟧⟦ t6⟧), which made a diverged continuation unreadable.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report/report.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunRecord sampled(const std::string& id, int64_t a, int64_t b, int64_t c) {
  RunRecord r = test::make_run(id, DecodeMode::sample,
                               {test::make_step(0, a, {{a, 0.6}, {a + 1, 0.3}}), test::make_step(1, b, {{b, 0.5}, {b + 1, 0.2}}),
                                test::make_step(2, c, {{c, 0.7}, {c + 1, 0.2}})},
                               "x");
  r.params.sampling.temperature = 1;
  r.params.sampling.top_p = 0.9;
  return r;
}

TEST(ReportAbExcerpt, OneBracketPerDifferingStretch) {
  const std::vector<ReportFile> files =
      render_report({ReportDocument{"a.json", test::make_evidence({sampled("x/a", 1, 2, 3)}), "before"},
                     ReportDocument{"b.json", test::make_evidence({sampled("x/a", 1, 5, 6)}), "after"}});
  std::string md;
  for (const ReportFile& f : files)
    if (f.name == "report.md") md = f.content;
  EXPECT_THAT(md, HasSubstr("\" t1⟦ t2 t3⟧\""));
  EXPECT_THAT(md, HasSubstr("\" t1⟦ t5 t6⟧\""));
  EXPECT_THAT(md, Not(HasSubstr("⟧⟦")));
}

}  // namespace
}  // namespace genrepro
