// genrepro report: bad input is one line and exit 2; hand-made evidence renders into a directory.
// (The default --out, reports/out under the working directory, stays a subprocess test.)
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

std::string data(const std::string& name) { return source_path("tests/cli/data/" + name); }

const std::vector<CliCase> kCases = {
    {"no_evidence", {"report"}, 2, "", R"re(evidence is required)re", Stderr::one_line},
    {"missing_file", {"report", data("no-such-evidence.json"), "--out", "{scratch}/cli-report-missing"}, 2, "",
     R"re(genrepro: error: .*no-such-evidence\.json: no such file)re", Stderr::one_line},
    {"not_json", {"report", data("make_report_evidence.py"), "--out", "{scratch}/cli-report-not-json"}, 2, "",
     R"re(genrepro: error: .*make_report_evidence\.py: invalid JSON: .*line 1, column 1)re", Stderr::one_line},
    {"not_evidence", {"report", data("not-evidence.json"), "--out", "{scratch}/cli-report-not-evidence"}, 2, "",
     R"re(genrepro: error: .*not-evidence\.json: schema: missing)re", Stderr::one_line},
    // One good file and one bad: nothing half-done is reported as success.
    {"one_bad_of_two", {"report", data("report-evidence.json"), data("not-evidence.json"), "--out", "{scratch}/cli-report-one-bad"},
     2, "", R"re(not-evidence\.json)re", Stderr::one_line},
    {"renders_hand_made_evidence", {"report", data("report-evidence.json"), "--out", "{scratch}/cli-report"}, 0,
     R"re(cli-report/report\.md\n.*cli-report/report\.html\n.*cli-report/first-prediction\.svg\n.*cli-report/nucleus-sizes\.svg\n.*cli-report/kept-per-step\.svg\n.*cli-report/kept-per-step-2\.svg\n.*cli-report/chosen-token-probability\.svg\n.*cli-report/chosen-token-probability-3\.svg\n$)re",
     ""},
    // --json: the files written, the bootstrap seed and the grid summaries (none in this evidence:
    // 3 seeds per cell at most).
    {"json_without_grids", {"report", data("report-evidence.json"), "--json", "--out", "{scratch}/cli-report-json"}, 0,
     R"re(^\{\n  "files": \[\n    "[^"]*cli-report-json/report\.md",\n    "[^"]*cli-report-json/report\.html",.*\],\n  "bootstrap_seed": 24,\n  "grids": \[\]\n\}\n$)re",
     ""},
    // --label: one per evidence file, or none.
    {"label_count", {"report", data("diff/golden.json"), data("diff/one_token.json"), "--label", "A", "--out", "{scratch}/r"}, 2, "",
     R"re(--label: given 1 time\(s\) for 2 evidence file\(s\); give one --label per evidence file)re", Stderr::one_line},
    {"golden_missing", {"report", data("diff/golden.json"), "--golden", data("no-such-golden"), "--out", "{scratch}/r"}, 2, "",
     R"re(no-such-golden: no such file)re", Stderr::one_line},
    {"article_not_facts", {"report", data("diff/golden.json"), "--article", data("diff/golden.json"), "--out", "{scratch}/r"}, 2, "",
     R"re(golden\.json: not an article-facts file)re", Stderr::one_line},
};

class Report : public ::testing::TestWithParam<CliCase> {};
TEST_P(Report, ExitAndOutput) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Report, Report, ::testing::ValuesIn(kCases), CaseName{});

// --out names an existing file: the report cannot be a directory there; the file stays as it was.
TEST(Report, OutIsAFile) {
  const ScratchDir scratch("report");
  const std::string evidence = read_bytes(data("report-evidence.json"));
  const std::string out = scratch.write("report-evidence.json", evidence);
  expect_case({"out_is_a_file", {"report", data("report-evidence.json"), "--out", out}, 2, "",
               R"re(--out .*report-evidence\.json exists and is not a directory; give a directory path)re", Stderr::one_line});
  EXPECT_EQ(read_bytes(out), evidence);
}

// "report --golden on fixture evidence with one mutated token shows a verdict section
// that names that run"; "report A.json B.json shows a labelled side-by-side table".
TEST(Report, GoldenVerdictAndLabelledAB) {
  const ScratchDir scratch("report");
  const std::string out = scratch / "verdict";
  const CliResult r = genrepro({"report", data("diff/one_token.json"), "--golden", data("diff/golden_dir"), "--out", out});
  ASSERT_EQ(r.exit, 0) << describe({}, r);
  const std::string md = read_bytes(std::filesystem::path(out) / "report.md");
  EXPECT_NE(md.find("## Verdict against the golden"), std::string::npos) << md;
  EXPECT_NE(md.find("| [sampling/p0/sample-t1-s42-2ce330fa](#experiment-sampling) | **sampler/RNG change** | **new token 3 (steps\\[2\\])** | 30 \" t30\" p 0.4500 | 31 \" t31\" p 0.4500 |"),
            std::string::npos) << md;

  // The same token, the same number, in diff's CI output and in the report.
  const std::string junit = scratch / "diff.xml";
  ASSERT_EQ(genrepro({"diff", data("diff/golden_dir"), data("diff/one_token.json"), "--junit", junit}).exit, 1);
  EXPECT_NE(read_bytes(junit).find("sampler/RNG change at new token 3 (steps[2])"), std::string::npos) << read_bytes(junit);

  const std::string ab = scratch / "ab";
  const CliResult r2 = genrepro({"report", data("diff/golden.json"), data("diff/one_token.json"), "--label", "before", "--label", "after", "--out", ab});
  ASSERT_EQ(r2.exit, 0) << describe({}, r2);
  const std::string md2 = read_bytes(std::filesystem::path(ab) / "report.md");
  EXPECT_NE(md2.find("| run | before: stop | before: continuation | after: stop | after: continuation | after vs before |"), std::string::npos) << md2;
  EXPECT_NE(md2.find("**sampler/RNG change at new token 3 (steps\\[2\\])**"), std::string::npos) << md2;
}

}  // namespace
}  // namespace genrepro::test
