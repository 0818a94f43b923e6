// diff's CI formats on hand-built diffs: one JUnit test case per run with the failure message a
// person needs (verdict, new token N, both tokens and probabilities), missing/extra runs as
// failures, control characters and markup escaped; GitHub annotations one line each.
#include "compare/diff_ci_report.hpp"

#include <gtest/gtest.h>

namespace genrepro {
namespace {

EvidenceDiff one_regression_and_one_missing() {
  EvidenceDiff d;
  d.golden_files = {"golden/fixture/greedy.json"};
  d.evidence_file = "reports/evidence.json";
  RunDiff agree;
  agree.id = "greedy/p0/greedy-0a1b2c3d";
  RunDiff bad;
  bad.id = "sampling/p0/sample-t1-s42-4e5f6a7b";
  bad.verdict = Verdict::regression;
  bad.reason = "the model's distribution changed";
  Divergence div;
  div.step = 5;
  div.golden.id = 30;
  div.golden.text = " <t30>\x01";
  div.golden.prob_in_golden = 0.7;
  div.current.id = 31;
  div.current.text = " t31 & \"x\"";
  div.current.prob_in_new = 0.2;
  bad.divergence = div;
  bad.first_difference_step = 5;
  d.runs = {agree, bad};
  d.missing = {"eos/p0/sample-s43-deadbeef"};
  ValueDifference env;
  env.path = "environment.libtorch_version";
  env.golden = "1.13.0";
  env.current = "2.8.0";
  d.environment = {env};
  return d;
}

TEST(DiffCiReport, DifferenceLineCountsTokensFromOne) {
  const EvidenceDiff d = one_regression_and_one_missing();
  EXPECT_EQ(run_difference_line(d.runs[1]),
            "regression at new token 6 (steps[5]): golden token 30 \" <t30>\\u0001\" (p 0.7), new token 31 "
            "\" t31 & \\\"x\\\"\" (p 0.2); the model's distribution changed");
}

TEST(DiffCiReport, JunitHasOneCasePerRunAndFailsExactlyTheDifferingAndMissing) {
  const std::string xml = diff_to_junit(one_regression_and_one_missing());
  EXPECT_NE(xml.find("<testsuite name=\"genrepro diff\" tests=\"3\" failures=\"2\" errors=\"0\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase name=\"greedy/p0/greedy-0a1b2c3d\" classname=\"greedy\" time=\"0\"/>"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"regression\" message=\"run sampling/p0/sample-t1-s42-4e5f6a7b: regression "
                     "at new token 6 (steps[5]): golden token 30 &quot; &lt;t30&gt;\\u0001&quot; (p 0.7), new token 31 "
                     "&quot; t31 &amp; \\&quot;x\\&quot;&quot; (p 0.2)"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"missing\" message=\"missing run eos/p0/sample-s43-deadbeef: in golden"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("environment.libtorch_version: &quot;1.13.0&quot; -&gt; &quot;2.8.0&quot;"), std::string::npos);
  for (char c : xml) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << "raw control byte in XML";
}

TEST(DiffCiReport, GithubAnnotationsOneErrorPerFailureAndOneWarning) {
  const std::string lines = diff_to_github_annotations(one_regression_and_one_missing());
  EXPECT_EQ(lines,
            "::error file=reports/evidence.json,title=genrepro diff sampling/p0/sample-t1-s42-4e5f6a7b::run "
            "sampling/p0/sample-t1-s42-4e5f6a7b: regression at new token 6 (steps[5]): golden token 30 \" "
            "<t30>\\u0001\" (p 0.7), new token 31 \" t31 & \\\"x\\\"\" (p 0.2); the model's distribution changed\n"
            "::error title=genrepro diff missing run::missing run eos/p0/sample-s43-deadbeef: in golden, not in "
            "reports/evidence.json\n"
            "::warning title=genrepro diff environment::likely causes, not failures: environment.libtorch_version: "
            "\"1.13.0\" -> \"2.8.0\"%0A\n");
}

TEST(DiffCiReport, NothingToAnnotateWhenEverythingAgrees) {
  EvidenceDiff d;
  RunDiff agree;
  agree.id = "greedy/p0/greedy-0a1b2c3d";
  d.runs = {agree};
  EXPECT_EQ(diff_to_github_annotations(d), "");
  EXPECT_NE(diff_to_junit(d).find("tests=\"1\" failures=\"0\""), std::string::npos);
}

}  // namespace
}  // namespace genrepro
