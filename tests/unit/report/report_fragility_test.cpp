// report --golden --sensitivity: the verdict labels each run whose tokens diverged
// known-fragile or unexpected, by diff --sensitivity's rules, with a summary line; without a
// matrix the verdict table is what it was. The matrix and the flips are planted
// (tests/unit/compare/planted_flip.hpp).
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "compare/fragility.hpp"
#include "report/report.hpp"
#include "unit/compare/planted_flip.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string content(const std::vector<ReportFile>& files, const std::string& name) {
  for (const ReportFile& f : files)
    if (f.name == name) return f.content;
  throw std::runtime_error("no " + name);
}
std::string markdown(const std::vector<ReportFile>& files) { return content(files, "report.md"); }

TEST(ReportFragility, TheVerdictLabelsEachDivergenceAndSaysHowMany) {
  const test::ScratchDir dir("report-fragility");
  const RunRecord a = test::make_run("a", DecodeMode::greedy, test::greedy_steps());
  const RunRecord b = test::make_run("b", DecodeMode::greedy, test::near_tie_steps());
  // b flips where the matrix saw it flip; a parts at new token 3 with a large margin.
  std::vector<StepRecord> a_changed = test::greedy_steps();
  a_changed[2] = test::make_step(2, 31, {{31, 0.7}, {30, 0.2}});
  const ReportDocument doc{"new.json", test::make_evidence({test::make_run("a", DecodeMode::greedy, a_changed),
                                                          test::make_run("b", DecodeMode::greedy, test::b_flipped())}), ""};
  ReportOptions options;
  options.golden = {EvidenceFile{"golden.json", test::make_evidence({a, b})}};
  options.golden_name = "golden.json";
  const std::string plain = markdown(render_report({doc}, options));
  EXPECT_THAT(plain, Not(HasSubstr("numerics (--sensitivity)")));
  EXPECT_THAT(plain, Not(HasSubstr("known-fragile")));

  options.sensitivity = read_fragility(test::write_matrix(dir));
  const std::vector<ReportFile> files = render_report({doc}, options);
  const std::string md = markdown(files);
  EXPECT_THAT(content(files, "report.html"), HasSubstr("known-fragile: logit margin 0.0253 &lt;= m* 0.0253"));
  EXPECT_THAT(md, HasSubstr("| run | verdict | first difference | golden token | new token | why | numerics (--sensitivity) |"));
  EXPECT_THAT(md, HasSubstr("known-fragile: logit margin 0.0253 \\<= m\\* 0.0253; flipped there in 1 of 2 cells"));
  EXPECT_THAT(md, HasSubstr("unexpected: logit margin 1.25 \\> m\\* 0.0253; no cell of the matrix flipped it there"));
  EXPECT_THAT(md, HasSubstr("1 of the 2 token divergence(s) known-fragile, 1 unexpected"));
  // The verdict stays the gate's: the labels explain.
  EXPECT_THAT(md, HasSubstr("FAIL: 2 run(s) differ"));
}

}  // namespace
}  // namespace genrepro
