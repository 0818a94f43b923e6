// report on merged evidence from mixed machines: which runs ran where, next to the
// golden's environment in the verdict and next to the file's own in "Where this came from", in
// Markdown and HTML, the field-by-field details folded; nothing of it when the environments agree.
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "golden/article_check.hpp"
#include "report/report.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const ReportFile& file(const std::vector<ReportFile>& files, const std::string& name) {
  for (const ReportFile& f : files)
    if (f.name == name) return f;
  throw std::runtime_error("no report file " + name);
}

// Six greedy runs (indices 0..5) made on an Intel host with the portable kernel.
Evidence intel_evidence() {
  std::vector<RunRecord> runs;
  for (int i = 0; i < 6; ++i) runs.push_back(test::make_run("g/r" + std::to_string(i), DecodeMode::greedy, test::greedy_steps(), "g"));
  Evidence e = test::make_evidence(runs);
  e.environment.cpu.model = "Intel(R) Xeon(R) Platinum 8375C";
  e.environment.blas.core = "Haswell";
  return e;
}

// The same runs, 1 and 3 merged from a shard that ran on an AMD runner.
Evidence merged_with_amd_runs() {
  Evidence e = intel_evidence();
  RunEnvironment amd{e.environment, {1, 3}};
  amd.environment.cpu.model = "AMD EPYC 9R14";
  amd.environment.cpu.flags = "fpu sse2 avx avx2 fma";
  e.run_environments.push_back(amd);
  return e;
}

ReportOptions against(const Evidence& golden) {
  ReportOptions o;
  o.golden = {EvidenceFile{"golden/g.json", golden}};
  o.golden_name = "golden";
  return o;
}

// The text between a heading and the next heading of the same level.
std::string section(const std::string& md, const std::string& heading) {
  const std::size_t from = md.find(heading);
  if (from == std::string::npos) return "";
  const std::size_t to = md.find("\n## ", from + heading.size());
  return md.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

TEST(ReportEnvironments, VerdictNamesTheRunsOfTheOtherMachineAndWhatDiffers) {
  const std::vector<ReportFile> files = render_report({ReportDocument{"merged.json", merged_with_amd_runs(), ""}}, against(intel_evidence()));
  const std::string verdict = section(file(files, "report.md").content, "## Verdict against the golden");
  EXPECT_THAT(verdict, HasSubstr("PASS: every run reproduces the golden."));
  EXPECT_THAT(verdict, HasSubstr("The runs ran in 2 environments (shards merged from different machines); 1 differs from the golden's environment"));
  // One row per environment: runs 0, 2, 4, 5 as the golden's; runs 1, 3 with the AMD fields.
  EXPECT_THAT(verdict, HasSubstr("| runs 0, 2, 4, 5 | 1: the file's environment | nowhere |"));
  EXPECT_THAT(verdict, HasSubstr("| runs 1, 3 | 2: run\\_environments\\[0\\] | **cpu.model \"AMD EPYC 9R14\"; cpu.flags \"fpu sse2 avx avx2 fma\"** |"));
  // Field by field, folded, with the golden's value beside the runs' own.
  const std::size_t fold = verdict.find("<summary>Environment differences, run by run and field by field (2)</summary>");
  ASSERT_NE(fold, std::string::npos) << verdict;
  EXPECT_THAT(verdict.substr(fold), HasSubstr("| runs 1, 3 | cpu.model | \"Intel(R) Xeon(R) Platinum 8375C\" | \"AMD EPYC 9R14\" |"));
  EXPECT_THAT(verdict.substr(fold), HasSubstr("</details>"));
  EXPECT_THAT(verdict, Not(HasSubstr("environment\\[runs"))) << "the merged form replaces diff's path list";

  const std::string html = file(files, "report.html").content;
  EXPECT_THAT(html, HasSubstr("<summary>Environment differences, run by run and field by field (2)</summary>"));
  EXPECT_THAT(html, HasSubstr("runs 1, 3"));
  EXPECT_THAT(html, HasSubstr("AMD EPYC 9R14"));
}

// A golden made on a third machine: both environments differ, each row names its own fields.
TEST(ReportEnvironments, AGoldenFromElsewhereListsEveryEnvironmentThatDiffers) {
  Evidence golden = intel_evidence();
  golden.environment.blas.core = "SkylakeX";
  const std::string md = file(render_report({ReportDocument{"merged.json", merged_with_amd_runs(), ""}}, against(golden)), "report.md").content;
  const std::string verdict = section(md, "## Verdict against the golden");
  EXPECT_THAT(verdict, HasSubstr("2 differ from the golden's environment"));
  EXPECT_THAT(verdict, HasSubstr("| runs 0, 2, 4, 5 | 1: the file's environment | **blas.core \"Haswell\"** |"));
  EXPECT_THAT(verdict, HasSubstr("| runs 1, 3 | 2: run\\_environments\\[0\\] | **blas.core \"Haswell\"; cpu.model \"AMD EPYC 9R14\"; cpu.flags"));
  EXPECT_THAT(verdict, HasSubstr("| runs 0, 2, 4, 5 | blas.core | \"SkylakeX\" | \"Haswell\" |"));
}

TEST(ReportEnvironments, WhereThisCameFromSaysWhichRunsTheTableIsAndWhereTheOthersRan) {
  const std::string md = file(render_report({ReportDocument{"merged.json", merged_with_amd_runs(), ""}}), "report.md").content;
  const std::string sources = section(md, "## Where this came from");
  EXPECT_THAT(sources, HasSubstr("The table above is environment 1, where runs 0, 2, 4, 5 ran"));
  EXPECT_THAT(sources, HasSubstr("| runs 1, 3 | 2: run\\_environments\\[0\\] | **cpu.model \"AMD EPYC 9R14\"; cpu.flags \"fpu sse2 avx avx2 fma\"** |"));
  EXPECT_THAT(sources, HasSubstr("| runs 1, 3 | cpu.model | \"Intel(R) Xeon(R) Platinum 8375C\" | \"AMD EPYC 9R14\" |"));
  EXPECT_THAT(md, Not(HasSubstr("Verdict"))) << "no golden, no verdict";
}

// Shards of one machine merge into one environment: no line about environments anywhere.
TEST(ReportEnvironments, EqualEnvironmentsShowNoSuchLines) {
  const std::string md = file(render_report({ReportDocument{"one.json", intel_evidence(), ""}}, against(intel_evidence())), "report.md").content;
  EXPECT_THAT(md, HasSubstr("PASS: every run reproduces the golden."));
  for (const char* line : {"environments (shards merged", "The table above is environment 1", "run\\_environments", "Environment differences",
                           "The environment differs from the golden's"})
    EXPECT_THAT(md, Not(HasSubstr(line)));
}

// Evidence of one other machine keeps the one-line note of before: no runs to tell apart.
TEST(ReportEnvironments, OneOtherMachineKeepsTheFieldNote) {
  Evidence golden = intel_evidence();
  golden.environment.cpu.model = "AMD EPYC 7R13";
  const std::string md = file(render_report({ReportDocument{"one.json", intel_evidence(), ""}}, against(golden)), "report.md").content;
  EXPECT_THAT(md, HasSubstr("The environment differs from the golden's in 1 field(s) (likely causes, never failures): environment.cpu.model."));
  EXPECT_THAT(md, Not(HasSubstr("run\\_environments")));
}

// --article beside --golden: the facts' notes name the environment of the runs they rest on.
TEST(ReportEnvironments, ArticleFactsNameTheEnvironmentOfTheirRuns) {
  Evidence merged = merged_with_amd_runs();
  ReportOptions o = against(intel_evidence());
  o.article_facts = OrderedJson{{"schema", kArticleFactsSchema},
                                {"prompt", "the river bank was"},
                                {"generations", OrderedJson::array({{{"name", "greedy"},
                                                                     {"params", {{"mode", "greedy"}, {"max_new_tokens", 3}}},
                                                                     {"text", "the river bank was t10 t20 t30"},
                                                                     {"stop", {{"reason", "max_new_tokens"}, {"step", 3}}}}})},
                                {"nucleus_sizes", OrderedJson::array()},
                                {"eos", {{"token_id", 50256}, {"text", "<|endoftext|>"}}}};
  o.article_name = "facts.json";
  const std::string md = file(render_report({ReportDocument{"merged.json", merged, ""}}, o), "report.md").content;
  const std::string article = section(md, "## Against the article");
  EXPECT_THAT(article, HasSubstr("6 runs checked; environment 2 (runs 1, 3): cpu.model \"AMD EPYC 9R14\"; and 1 more"));
}

}  // namespace
}  // namespace genrepro
