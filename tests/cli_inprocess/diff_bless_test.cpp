// genrepro diff: exact exit codes (0 agree, 1 differ, 2 bad input) and reports on the
// hand-made evidence in tests/cli/data/diff (test data made by its make_data.py, not goldens).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

std::string data(const std::string& name) { return source_path("tests/cli/data/diff/" + name); }

const std::vector<CliCase> kDiff = {
    {"agree", {"diff", data("golden.json"), data("same.json")}, 0,
     R"re(environment.libtorch_version: "1.13.0" -> "2.8.0".*diff: 2 runs compared, 2 agree, 0 differ; 0 missing, 0 extra)re",
     ""},
    {"golden_directory", {"diff", data("golden_dir"), data("same.json")}, 0, R"re(diff: 2 runs compared, 2 agree, 0 differ)re",
     ""},
    {"one_token", {"diff", data("golden.json"), data("one_token.json")}, 1,
     R"re(run sampling/p0/sample-t1-s42-2ce330fa: sampler/RNG change at new token 3 \(steps\[2\]\)\n.*golden token: 30 " t30"  p\(golden\) 0.45001  p\(new\) 0.45001\n  new token:    31 " t31"  p\(golden\) 0.44999  p\(new\) 0.44999\n  margin \(best - second\): golden .*diff: 2 runs compared, 1 agree, 1 differ \(1 sampler/RNG change\))re",
     ""},
    {"near_tie", {"diff", data("near_tie_golden.json"), data("near_tie_new.json")}, 1,
     R"re(near-tie at new token 2 \(steps\[1\]\).*\(1 near-tie\))re", ""},
    {"near_tie_tighter_tolerance",
     {"diff", data("near_tie_golden.json"), data("near_tie_new.json"), "--prob-tolerance", "1e-6"}, 1,
     R"re(regression at new token 2 \(steps\[1\]\).*prob tolerance 1e-06)re", ""},
    {"json", {"diff", data("golden.json"), data("one_token.json"), "--json"}, 1,
     R"re("schema": "genrepro.diff/1".*"verdict": "sampler_change")re", ""},
    {"missing_runs", {"diff", data("golden.json"), data("golden_dir/greedy.json")}, 1,
     R"re(missing run sampling/p0/sample-t1-s42-2ce330fa: in golden, not in the new evidence.*1 missing, 0 extra)re", ""},
    // Bad input: one line, exit 2.
    {"bad_missing_file", {"diff", data("golden.json"), data("nope.json")}, 2, "", R"re(nope.json: no such file)re",
     Stderr::one_line},
    {"bad_not_json", {"diff", data("golden.json"), data("not_json.json")}, 2, "", R"re(not_json.json: invalid JSON)re",
     Stderr::one_line},
    {"bad_not_evidence", {"diff", data("not_evidence.json"), data("golden.json")}, 2, "", R"re(not genrepro evidence)re",
     Stderr::one_line},
    {"bad_schema_version", {"diff", data("golden.json"), data("wrong_schema.json")}, 2, "",
     R"re(schema string "genrepro.evidence/0", this build reads "genrepro.evidence/1")re", Stderr::one_line},
    {"bad_field", {"diff", data("golden.json"), data("bad_field.json")}, 2, "",
     R"re(bad_field.json: runs\[0\]\.steps\[1\]\.prob: expected a number .*found string "0.5")re", Stderr::one_line},
    {"bad_overlapping_golden", {"diff", data("overlap_dir"), data("golden.json")}, 2, "",
     R"re(is also in .*golden files must not overlap)re", Stderr::one_line},
    {"bad_tolerance", {"diff", data("golden.json"), data("same.json"), "--prob-tolerance", "-1"}, 2, "",
     R"re(--prob-tolerance -1: must be a finite number >= 0)re", Stderr::one_line},
};

class Diff : public ::testing::TestWithParam<CliCase> {};
TEST_P(Diff, ExitAndReport) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Diff, Diff, ::testing::ValuesIn(kDiff), CaseName{});

// bless: tests/cli_inprocess/bless_review_test.cpp.

}  // namespace
}  // namespace genrepro::test
