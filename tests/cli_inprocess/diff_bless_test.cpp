// genrepro diff and bless: exact exit codes (0 agree, 1 differ, 2 bad input) and reports on the
// hand-made evidence in tests/cli/data/diff (test data made by its make_data.py, not goldens);
// bless refuses without a terminal or --yes, asks on one, and writes one stripped file per
// experiment that then agrees with the evidence.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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
     R"re(run greedy/p0/greedy-0a1b2c3d: sampler/RNG change at step 2\n.*golden token: 30 " t30"  p\(golden\) 0.7  p\(new\) 0.7\n  new token:    31 " t31"  p\(golden\) 0.2  p\(new\) 0.2\n  margin \(best - second\): golden 0.5, new 0.5.*diff: 2 runs compared, 1 agree, 1 differ \(1 sampler/RNG change\))re",
     ""},
    {"near_tie", {"diff", data("near_tie_golden.json"), data("near_tie_new.json")}, 1,
     R"re(near-tie at step 1.*\(1 near-tie\))re", ""},
    {"near_tie_tighter_tolerance",
     {"diff", data("near_tie_golden.json"), data("near_tie_new.json"), "--prob-tolerance", "1e-6"}, 1,
     R"re(regression at step 1.*prob tolerance 1e-06)re", ""},
    {"json", {"diff", data("golden.json"), data("one_token.json"), "--json"}, 1,
     R"re("schema": "genrepro.diff/1".*"verdict": "sampler_change")re", ""},
    {"missing_runs", {"diff", data("golden.json"), data("golden_dir/greedy.json")}, 1,
     R"re(missing run sampling/p0/sample-t1-s42-4e5f6a7b: in golden, not in the new evidence.*1 missing, 0 extra)re", ""},
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

std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// What bless --yes must leave in a golden directory: exactly the expected files (no temporary
// file: bless writes a hidden one and renames it), each evidence JSON without the volatile
// fields, holding only its own experiment's runs.
void expect_golden_dir(const std::filesystem::path& dir, const std::vector<std::string>& expected) {
  ASSERT_EQ(names_in(dir), expected);
  for (const std::string& name : expected) {
    SCOPED_TRACE(name);
    const nlohmann::json doc = nlohmann::json::parse(read_bytes(dir / name));
    EXPECT_EQ(doc.value("schema", ""), "genrepro.evidence/1");
    EXPECT_FALSE(doc.contains("created_utc")) << "created_utc not stripped";
    EXPECT_FALSE(doc["environment"]["threads"].contains("runs_concurrently")) << "runs_concurrently not stripped";
    ASSERT_FALSE(doc["runs"].empty());
    for (const nlohmann::json& run : doc["runs"]) {
      EXPECT_FALSE(run.contains("timing")) << run["id"] << ": timing not stripped";
      EXPECT_EQ(run["experiment"].get<std::string>() + ".json", name) << run["id"];
    }
  }
}

// Without --yes and without a terminal (stdin not a tty, as in CI) bless refuses, exit 2, after
// showing what would change, and writes nothing.
TEST(Bless, RefusesWithoutTerminalAndWritesNothing) {
  const ScratchDir scratch("bless");
  expect_case({"needs_yes_without_terminal", {"bless", data("golden.json"), "--into", scratch / "refused"}, 2,
               R"re(bless: .*greedy.json: new, 1 runs)re", R"re(not asking without a terminal .*re-run with --yes)re",
               Stderr::one_line});
  expect_case({"refused_wrote_nothing", {"diff", scratch / "refused", data("golden.json")}, 2, "",
               R"re(refused: no such file)re", Stderr::one_line});
}

// --yes: one file per experiment, volatile fields stripped, and the blessed directory then agrees
// with the evidence (and with the same runs reordered, same.json).
TEST(Bless, YesWritesOneStrippedFilePerExperimentThatAgrees) {
  const ScratchDir scratch("bless");
  const std::string into = scratch / "blessed";
  expect_case({"yes_writes", {"bless", data("golden.json"), "--into", into, "--yes"}, 0,
               R"re(bless: wrote 2 golden file\(s\) into)re", ""});
  expect_golden_dir(into, {"greedy.json", "sampling.json"});
  expect_case({"then_diff_agrees", {"diff", into, data("same.json")}, 0, R"re(2 agree, 0 differ)re", ""});
}

// On a terminal bless asks: "n" writes nothing (exit 1: the golden still differs), "y" writes.
TEST(Bless, AsksOnATerminal) {
  const ScratchDir scratch("bless");
  const std::vector<std::string> args = {"bless", data("golden.json"), "--into", scratch / "asked"};
  const CliResult no = genrepro(args, {"n\n", /*in_is_terminal=*/true});
  EXPECT_EQ(no.exit, 1) << describe(args, no);
  EXPECT_TRUE(Searches(R"re(Write 2 golden file\(s\) into .*\? \[y/N\] bless: not confirmed; nothing written)re", no.out));
  EXPECT_FALSE(std::filesystem::exists(scratch / "asked"));
  const CliResult yes = genrepro(args, {"y\n", /*in_is_terminal=*/true});
  EXPECT_EQ(yes.exit, 0) << describe(args, yes);
  EXPECT_TRUE(Searches(R"re(bless: wrote 2 golden file\(s\) into)re", yes.out));
  expect_golden_dir(scratch / "asked", {"greedy.json", "sampling.json"});
}

}  // namespace
}  // namespace genrepro::test
