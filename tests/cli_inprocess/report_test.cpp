// genrepro report: bad input is one line and exit 2; hand-made evidence renders into a directory.
// (The default --out, reports/out under the working directory, stays a subprocess test.)
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
     R"re(cli-report/report\.md\n.*cli-report/report\.html\n.*cli-report/first-prediction\.svg\n.*cli-report/nucleus-sizes\.svg\n.*cli-report/kept-per-step\.svg\n.*cli-report/chosen-token-probability\.svg\n$)re",
     ""},
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
               R"re(report-evidence\.json/report\.md)re", Stderr::one_line});
  EXPECT_EQ(read_bytes(out), evidence);
}

}  // namespace
}  // namespace genrepro::test
