// bless's library side: one golden file per experiment, volatile fields stripped, the preview
// diff against what the directory holds, atomic writes that leave an old golden intact on failure.
#include "golden/golden_bless.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

RunRecord run_of(const std::string& id, const std::string& experiment, int64_t token) {
  return test::make_run(id, DecodeMode::greedy, {test::make_step(0, token, {{token, 0.5}})}, experiment);
}

// Consistent as the writer's (the reader checks every relation): ids are test::make_consistent's.
Evidence evidence_of(const std::vector<RunRecord>& runs) {
  Evidence e = test::make_evidence(runs);
  e.environment.threads.runs_concurrently = 2;
  test::make_consistent(e);
  return e;
}

// The id run_of(given, experiment, ...) has in evidence_of's evidence.
std::string id(const std::string& given, const std::string& experiment) { return test::consistent_id(run_of(given, experiment, 1)); }

class GoldenBless : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("genrepro_bless_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string golden() const { return (dir_ / "golden").string(); }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};


BlessDecisions accept_all(const BlessPlan& plan) {
  BlessDecisions d;
  for (const GoldenFilePlan& f : plan.files)
    for (const RunReview& r : f.runs)
      if (r.needs_decision()) d.runs[r.id] = Decision::accept;
  return d;
}

const BlessSource kSource{"0123abcd", false, "e.json"};

std::vector<std::string> run_ids(const OrderedJson& doc) {
  std::vector<std::string> ids;
  for (const auto& r : doc["runs"]) ids.push_back(r["id"].get<std::string>());
  return ids;
}

std::string refusal(const std::string& name) {
  try {
    check_golden_name(name, "e.json: runs[0].experiment");
  } catch (const EvidenceError& e) {
    return e.what();
  }
  return "";
}

TEST(GoldenFileName, PlainNamesAreTheFileName) {
  EXPECT_EQ(golden_file_name("temperature"), "temperature.json");
  EXPECT_EQ(golden_file_name("top-p_0.9"), "top-p_0.9.json");
  EXPECT_EQ(golden_file_name(std::string(kMaxGoldenNameLength, 'a')), std::string(kMaxGoldenNameLength, 'a') + ".json");
}

// Nothing in an evidence file can make bless write outside DIR or a hidden file in it.
TEST(GoldenFileName, NamesThatCouldLeaveTheDirectoryAreRefused) {
  const std::vector<std::string> hostile = {"../etc/passwd", "a/b", "..", ".", ".hidden", "", std::string("a\0b", 3),
                                            "a\x1b[31m", "tab\there", std::string(kMaxGoldenNameLength + 1, 'a'), "/abs",
                                            "a\\b", "na\xC3\xAFve"};
  for (const std::string& name : hostile) {
    SCOPED_TRACE(name);
    const std::string message = refusal(name);
    EXPECT_THAT(message, HasSubstr("e.json: runs[0].experiment: expected an experiment name of 1 to 64 letters"));
    EXPECT_THAT(message, HasSubstr("nothing outside DIR"));
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << "a control character reached the message";
    EXPECT_EQ(message.find('\n'), std::string::npos);
  }
  EXPECT_THAT(refusal(std::string(500, 'x')), HasSubstr("... (500 bytes)"));
}

TEST_F(GoldenBless, SplitsByExperimentAndStripsVolatileFields) {
  const EvidenceFile e{"e.json", evidence_of({run_of("greedy/a", "greedy", 5), run_of("sampling/b", "sampling", 6),
                                              run_of("greedy/c", "greedy", 7)})};
  const BlessPlan plan = plan_bless(e, golden());
  ASSERT_EQ(plan.files.size(), 2u);
  EXPECT_EQ(plan.files[0].path, (dir_ / "golden" / "greedy.json").string());
  EXPECT_EQ(plan.files[0].count(RunChange::added), 2u);
  EXPECT_FALSE(plan.files[0].exists());
  const std::optional<OrderedJson> doc = compose_golden(plan.files[0], accept_all(plan));
  ASSERT_TRUE(doc);
  EXPECT_EQ(run_ids(*doc), (std::vector<std::string>{id("greedy/a", "greedy"), id("greedy/c", "greedy")}));
  ASSERT_EQ((*doc)["experiments"].size(), 1u);
  EXPECT_EQ((*doc)["experiments"][0]["name"], "greedy");
  EXPECT_FALSE(doc->contains("created_utc"));
  EXPECT_FALSE((*doc)["runs"][0].contains("timing"));
  EXPECT_FALSE((*doc)["environment"]["threads"].contains("runs_concurrently"));
  EXPECT_EQ(plan.files[1].experiment, "sampling");
  EXPECT_THAT(format_bless_preview(plan, false), HasSubstr("golden/greedy.json: new, 2 runs"));
  EXPECT_FALSE(compose_golden(plan.files[0], {})) << "a new file with no accepted run is not written";
}

TEST_F(GoldenBless, WrittenGoldenAgreesAndUnchangedEvidenceWritesNothing) {
  const EvidenceFile e{"e.json", evidence_of({run_of("greedy/a", "greedy", 5), run_of("sampling/b", "sampling", 6)})};
  const BlessPlan plan = plan_bless(e, golden());
  EXPECT_EQ(write_golden(plan, accept_all(plan), kSource, golden()).size(), 2u);
  EXPECT_TRUE(diff_evidence(read_golden(golden()), e, {}).agree());
  // Keys keep the writer's order, so a golden reads like the evidence it came from.
  // The golden is the evidence's own text for its part, without the volatile fields.
  Evidence part = e.evidence;
  part.runs.resize(1);
  part.experiments.resize(1);
  part.created_utc = std::nullopt;
  part.environment.threads.runs_concurrently = std::nullopt;
  part.runs[0].result.seconds = std::nullopt;
  EXPECT_EQ(read(dir_ / "golden" / "greedy.json"), evidence_text(part));

  const BlessPlan again = plan_bless(e, golden());
  EXPECT_EQ(again.count(RunChange::unchanged), 2u);
  EXPECT_FALSE(compose_golden(again.files[0], accept_all(again)));
  EXPECT_TRUE(write_golden(again, accept_all(again), kSource, golden()).empty());
  EXPECT_THAT(format_bless_preview(again, false), HasSubstr("greedy.json: agrees, left as is, 1 runs"));
}

TEST_F(GoldenBless, ChangedRunShowsItsVerdictFirstDivergenceAndTokens) {
  const EvidenceFile old_e{"e.json", evidence_of({run_of("greedy/a", "greedy", 5)})};
  const BlessPlan first = plan_bless(old_e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  const BlessPlan plan = plan_bless(EvidenceFile{"e2.json", evidence_of({run_of("greedy/a", "greedy", 9)})}, golden());
  ASSERT_EQ(plan.files.size(), 1u);
  const GoldenFilePlan& f = plan.files[0];
  EXPECT_TRUE(f.exists());
  ASSERT_EQ(f.runs.size(), 1u);
  EXPECT_EQ(f.runs[0].change, RunChange::changed);
  ASSERT_TRUE(f.runs[0].diff);
  // Numbered as people count, with the JSON index beside it (diff_ci_report's convention).
  EXPECT_THAT(format_run_line(f, f.runs[0], false), HasSubstr("greedy.json: changed run " + id("greedy/a", "greedy") + ": "));
  EXPECT_THAT(format_run_line(f, f.runs[0], false), HasSubstr(" at new token 1 (steps[0])"));
  EXPECT_EQ(format_token_diff(f, f.runs[0], false),
            "  first different token: new token 1 (steps[0])\n  golden: \"[- t5-]\"\n  new:    \"{+ t9+}\"\n");
  EXPECT_THAT(format_token_diff(f, f.runs[0], true), HasSubstr("\x1b[31m t5\x1b[0m"));
  EXPECT_THAT(format_token_diff(f, f.runs[0], true), HasSubstr("\x1b[32m t9\x1b[0m"));
}

TEST_F(GoldenBless, TokenTextsCannotDriveTheTerminal) {
  RunRecord r = run_of("greedy/a", "greedy", 5);
  const BlessPlan first = plan_bless(EvidenceFile{"e.json", evidence_of({r})}, golden());
  write_golden(first, accept_all(first), kSource, golden());
  r = run_of("greedy/a", "greedy", 9);
  r.result.steps[0].token_text = "\x1b]0;owned\x07";
  const BlessPlan plan = plan_bless(EvidenceFile{"e2.json", evidence_of({r})}, golden());
  const std::string shown = format_token_diff(plan.files[0], plan.files[0].runs[0], false);
  EXPECT_THAT(shown, HasSubstr("\\u001b]0;owned\\u0007"));
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
}

// A run missing from the evidence must not vanish from the golden without a word.
TEST_F(GoldenBless, MissingRunIsKeptInPlaceWithoutPruneAndRemovedWithIt) {
  const EvidenceFile all{"e.json", evidence_of({run_of("x/a", "x", 1), run_of("x/b", "x", 2), run_of("x/c", "x", 3)})};
  const BlessPlan first = plan_bless(all, golden());
  write_golden(first, accept_all(first), kSource, golden());
  // b is gone, c changed.
  const EvidenceFile fewer{"e2.json", evidence_of({run_of("x/a", "x", 1), run_of("x/c", "x", 4)})};
  const BlessPlan plan = plan_bless(fewer, golden());
  const GoldenFilePlan& f = plan.files[0];
  ASSERT_EQ(f.count(RunChange::missing), 1u);
  EXPECT_EQ(f.runs.back().id, id("x/b", "x"));
  EXPECT_THAT(format_bless_preview(plan, false), HasSubstr("missing run " + id("x/b", "x") + ": in the golden, not in the evidence: kept (--prune removes it)"));
  EXPECT_THAT(format_bless_preview(plan, false), HasSubstr("1 changed, 1 missing from the evidence (kept), 1 unchanged"));

  BlessDecisions keep = accept_all(plan);
  const std::optional<OrderedJson> kept = compose_golden(f, keep);
  ASSERT_TRUE(kept);
  EXPECT_EQ(run_ids(*kept), (std::vector<std::string>{id("x/a", "x"), id("x/b", "x"), id("x/c", "x")})) << "kept where it was";
  EXPECT_EQ((*kept)["runs"][2]["output_ids"][0], 4);

  BlessDecisions prune = accept_all(plan);
  prune.prune = true;
  EXPECT_EQ(run_ids(*compose_golden(f, prune)), (std::vector<std::string>{id("x/a", "x"), id("x/c", "x")}));
  // Pruning alone changes the file.
  BlessDecisions only_prune;
  only_prune.prune = true;
  EXPECT_EQ(run_ids(*compose_golden(f, only_prune)), (std::vector<std::string>{id("x/a", "x"), id("x/c", "x")}));
  EXPECT_EQ((*compose_golden(f, only_prune))["runs"][1]["output_ids"][0], 3) << "c not accepted: the golden's c";
  // --run names what is pruned.
  only_prune.prune_only = {"x/other"};
  EXPECT_FALSE(compose_golden(f, only_prune));
}

TEST_F(GoldenBless, OnlyAcceptedRunsChange) {
  const EvidenceFile all{"e.json", evidence_of({run_of("x/a", "x", 1), run_of("x/b", "x", 2)})};
  const BlessPlan first = plan_bless(all, golden());
  write_golden(first, accept_all(first), kSource, golden());
  const BlessPlan plan = plan_bless(
      EvidenceFile{"e2.json", evidence_of({run_of("x/a", "x", 7), run_of("x/b", "x", 8), run_of("x/new", "x", 9)})}, golden());
  BlessDecisions d;
  d.runs[id("x/a", "x")] = Decision::accept;
  d.runs[id("x/b", "x")] = Decision::reject;
  d.runs[id("x/new", "x")] = Decision::skip;
  const std::optional<OrderedJson> doc = compose_golden(plan.files[0], d);
  ASSERT_TRUE(doc);
  EXPECT_EQ(run_ids(*doc), (std::vector<std::string>{id("x/a", "x"), id("x/b", "x")})) << "a new run that was not accepted is left out";
  EXPECT_EQ((*doc)["runs"][0]["output_ids"][0], 7);
  EXPECT_EQ((*doc)["runs"][1]["output_ids"][0], 2);
  d.runs[id("x/a", "x")] = Decision::reject;
  EXPECT_FALSE(compose_golden(plan.files[0], d)) << "nothing accepted, nothing pruned: the file is left alone";
}

// Bit-only drift: the same tokens and verdict, other recorded values (here a probability moved
// within the tolerance, as another numerics mode moves it). Listed with what differs; written
// only for the runs --refresh-bits names.
TEST_F(GoldenBless, BitOnlyDriftIsListedAndRefreshedOnlyWhenAsked) {
  const EvidenceFile old_e{"e.json", evidence_of({run_of("x/a", "x", 5), run_of("x/b", "x", 6)})};
  const BlessPlan first = plan_bless(old_e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  RunRecord drifted = test::make_run("x/a", DecodeMode::greedy, {test::make_step(0, 5, {{5, 0.50002}})}, "x");
  const BlessPlan plan = plan_bless(EvidenceFile{"e2.json", evidence_of({drifted, run_of("x/b", "x", 6)})}, golden());
  const GoldenFilePlan& f = plan.files[0];
  ASSERT_EQ(f.runs.size(), 2u);
  EXPECT_EQ(f.runs[0].change, RunChange::unchanged) << "within the tolerance diff agrees";
  EXPECT_THAT(f.runs[0].drift, HasSubstr("1 of 1 steps' records differ"));
  EXPECT_THAT(f.runs[0].drift, HasSubstr("largest |\u0394 prob| 2e-05"));
  EXPECT_EQ(f.runs[1].drift, "") << "recorded exactly as the golden has it";
  EXPECT_EQ(drifted_runs(plan), std::vector<std::string>{id("x/a", "x")});

  BlessDecisions none;
  EXPECT_FALSE(compose_golden(f, none)) << "a plain bless leaves bit-only drift as is";
  EXPECT_THAT(format_bless_preview(plan, false), HasSubstr("bits only: 1 of 1 steps' records differ"));
  EXPECT_THAT(format_bless_preview(plan, false), HasSubstr("left as is (--refresh-bits refreshes it)"));
  EXPECT_THAT(format_bless_preview(plan, false),
              HasSubstr("x.json: agrees, left as is, 2 runs, 1 with other bits (left as is; --refresh-bits refreshes them)"));

  BlessDecisions refresh;
  refresh.refresh = {id("x/a", "x")};
  const std::optional<OrderedJson> doc = compose_golden(f, refresh);
  ASSERT_TRUE(doc);
  EXPECT_DOUBLE_EQ((*doc)["runs"][0]["steps"][0]["prob"].get<double>(), 0.50002);
  EXPECT_THAT(format_bless_preview(plan, false, {}, refresh.refresh), HasSubstr("refreshed (--refresh-bits)"));
  EXPECT_THAT(format_bless_preview(plan, false, {}, refresh.refresh), HasSubstr("x.json: agrees, 2 runs, 1 with other bits (refreshed)"));
}

// With the same numerics a drifted run not named keeps its golden record, also when another run of
// its file is written.
TEST_F(GoldenBless, ADriftedRunNotRefreshedKeepsItsGoldenRecord) {
  const EvidenceFile old_e{"e.json", evidence_of({run_of("x/a", "x", 5), run_of("x/b", "x", 6)})};
  const BlessPlan first = plan_bless(old_e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  RunRecord drifted = test::make_run("x/a", DecodeMode::greedy, {test::make_step(0, 5, {{5, 0.50002}})}, "x");
  const BlessPlan plan = plan_bless(EvidenceFile{"e2.json", evidence_of({drifted, run_of("x/b", "x", 9)})}, golden());
  const GoldenFilePlan& f = plan.files[0];
  ASSERT_EQ(f.runs[1].change, RunChange::changed);
  BlessDecisions d;
  d.runs[id("x/b", "x")] = Decision::accept;
  const std::optional<OrderedJson> doc = compose_golden(f, d);
  ASSERT_TRUE(doc);
  EXPECT_DOUBLE_EQ((*doc)["runs"][0]["steps"][0]["prob"].get<double>(), 0.5) << "not refreshed: the golden's record";
  EXPECT_EQ((*doc)["runs"][1]["output_ids"][0], 9);
  EXPECT_TRUE(refreshed_runs(plan, d).empty());
}

// A refresh never carries a token change: a changed run is reviewed, whatever the refresh set says.
TEST_F(GoldenBless, RefreshNeverWritesAChangedRun) {
  const EvidenceFile old_e{"e.json", evidence_of({run_of("x/a", "x", 5)})};
  const BlessPlan first = plan_bless(old_e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  const BlessPlan plan = plan_bless(EvidenceFile{"e2.json", evidence_of({run_of("x/a", "x", 9)})}, golden());
  ASSERT_EQ(plan.files[0].runs[0].change, RunChange::changed);
  EXPECT_EQ(plan.files[0].runs[0].drift, "");
  EXPECT_TRUE(drifted_runs(plan).empty());
  BlessDecisions refresh;
  refresh.refresh = {id("x/a", "x")};
  EXPECT_FALSE(compose_golden(plan.files[0], refresh)) << "the changed run was not accepted: the golden keeps its tokens";
}

TEST_F(GoldenBless, ARegressionIsMarked) {
  const EvidenceFile old_e{"e.json", evidence_of({run_of("greedy/a", "greedy", 5)})};
  const BlessPlan first = plan_bless(old_e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  // Same token, a different distribution: nothing explains it.
  RunRecord r = test::make_run("greedy/a", DecodeMode::greedy, {test::make_step(0, 5, {{5, 0.9}})}, "greedy");
  const BlessPlan plan = plan_bless(EvidenceFile{"e2.json", evidence_of({r})}, golden());
  ASSERT_EQ(plan.files[0].runs.size(), 1u);
  EXPECT_TRUE(plan.files[0].runs[0].is_regression());
  EXPECT_THAT(format_run_line(plan.files[0], plan.files[0].runs[0], false), HasSubstr("changed run " + id("greedy/a", "greedy") + ": regression"));
}

TEST_F(GoldenBless, EnvironmentDifferencesAreListedOnce) {
  const EvidenceFile e{"e.json", evidence_of({run_of("x/a", "x", 1), run_of("y/a", "y", 2)})};
  const BlessPlan first = plan_bless(e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  Evidence moved = e.evidence;
  moved.environment.libtorch_version = "2.8.0";
  const std::string shared = format_shared_differences(plan_bless(EvidenceFile{"e2.json", moved}, golden()));
  EXPECT_THAT(shared, HasSubstr("environment.libtorch_version: \"1.13.0\" -> \"2.8.0\"\n"));
  EXPECT_EQ(shared.find("libtorch_version"), shared.rfind("libtorch_version")) << shared;
}

TEST_F(GoldenBless, RecordKeepsTheCommitOfEveryWrittenFile) {
  const EvidenceFile e{"e.json", evidence_of({run_of("x/a", "x", 1), run_of("y/a", "y", 2)})};
  const BlessPlan first = plan_bless(e, golden());
  write_golden(first, accept_all(first), kSource, golden());
  const BlessPlan second = plan_bless(EvidenceFile{"e2.json", evidence_of({run_of("y/a", "y", 3)})}, golden());
  write_golden(second, accept_all(second), BlessSource{"4567ef", true, "e2.json"}, golden());
  const std::string record = read(dir_ / "golden" / kBlessRecordName);
  EXPECT_THAT(record, HasSubstr("\nx.json\t0123abcd\tclean\te.json\tabc\t1\n"));
  EXPECT_THAT(record, HasSubstr("\ny.json\t4567ef\tdirty\te2.json\tabc\t1\n"));
  EXPECT_EQ(record.rfind("# genrepro bless", 0), 0u);
  EXPECT_NO_THROW(read_golden(golden())) << "the record is not taken for evidence";
}

// Symlinks in DIR: bless neither follows nor replaces one (docs/bless.md).
TEST_F(GoldenBless, SymlinkedGoldenFileOrRecordIsRefused) {
  fs::create_directories(dir_ / "golden");
  fs::create_directories(dir_ / "elsewhere");
  fs::create_symlink(dir_ / "elsewhere" / "x.json", dir_ / "golden" / "x.json");
  const EvidenceFile e{"e.json", evidence_of({run_of("x/a", "x", 1)})};
  try {
    plan_bless(e, golden());
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& err) {
    EXPECT_THAT(err.what(), HasSubstr("golden/x.json: the golden file is a symlink; bless writes regular files only"));
  }
  fs::remove(dir_ / "golden" / "x.json");
  fs::create_symlink(dir_ / "elsewhere" / "record", dir_ / "golden" / kBlessRecordName);
  const BlessPlan plan = plan_bless(e, golden());
  EXPECT_THROW(write_golden(plan, accept_all(plan), kSource, golden()), EvidenceError);
  EXPECT_FALSE(fs::exists(dir_ / "elsewhere" / "record"));
}

TEST_F(GoldenBless, FailedWriteLeavesTheTargetAlone) {
  // A non-empty directory where the golden file should go: rename must fail, nothing changes.
  fs::create_directories(dir_ / "golden" / "greedy.json" / "keep");
  try {
    write_json_atomically((dir_ / "golden" / "greedy.json").string(), OrderedJson{{"schema", "x"}});
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("greedy.json"));
    EXPECT_THAT(e.what(), HasSubstr("the previous one, if any, is unchanged"));
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "golden" / "greedy.json" / "keep"));
  std::size_t leftovers = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "golden")) leftovers += entry.path().filename() != "greedy.json";
  EXPECT_EQ(leftovers, 0u) << "a temporary file was left behind";
  // And bless itself refuses a golden path that is not a regular file before writing anything.
  EXPECT_THROW(plan_bless(EvidenceFile{"e.json", evidence_of({run_of("greedy/a", "greedy", 5)})}, golden()), EvidenceError);
}

// A bless is one journaled write (golden/golden_journal.hpp): a target that cannot be written (here
// a directory appearing where the second file goes) is found before anything is staged, and
// neither file nor the record changes, so no golden is ever left without its record line.
TEST_F(GoldenBless, ATargetThatCannotBeWrittenChangesNothing) {
  const EvidenceFile e{"e.json", evidence_of({run_of("x/a", "x", 1), run_of("y/a", "y", 2)})};
  const BlessPlan plan = plan_bless(e, golden());
  fs::create_directories(dir_ / "golden" / "y.json" / "keep");
  EXPECT_THROW(write_golden(plan, accept_all(plan), kSource, golden()), EvidenceError);
  EXPECT_FALSE(fs::exists(dir_ / "golden" / "x.json"));
  EXPECT_TRUE(fs::is_directory(dir_ / "golden" / "y.json" / "keep"));
  EXPECT_FALSE(fs::exists(dir_ / "golden" / kBlessRecordName));
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_ / "golden")) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"y.json"}) << "a staged or temporary file was left behind";
}

TEST_F(GoldenBless, RunWithoutExperimentIsRefused) {
  Evidence doc = evidence_of({run_of("greedy/a", "greedy", 5)});
  doc.runs[0].experiment = "";
  try {
    plan_bless(EvidenceFile{"e.json", doc}, golden());
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("e.json: runs[0].experiment: expected an experiment name"));
    EXPECT_THAT(e.what(), HasSubstr("found \"\""));
  }
}

}  // namespace
}  // namespace genrepro
