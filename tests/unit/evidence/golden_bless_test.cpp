// bless's library side: one golden file per experiment, volatile fields stripped, the preview
// diff against what the directory holds, atomic writes that leave an old golden intact on failure.
#include "evidence/golden_bless.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

RunRecord run_of(const std::string& id, const std::string& experiment, int64_t token) {
  return test::make_run(id, DecodeMode::greedy, {test::make_step(0, token, {{token, 0.5}})}, experiment);
}

Evidence evidence_of(const std::vector<RunRecord>& runs) {
  Evidence e = test::make_evidence(runs);
  e.environment.threads.runs_concurrently = 2;
  return e;
}

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

TEST(GoldenFileName, KeepsPlainNamesAndNeverLeavesTheDirectory) {
  EXPECT_EQ(golden_file_name("temperature"), "temperature.json");
  EXPECT_EQ(golden_file_name("top-p_0.9"), "top-p_0.9.json");
  EXPECT_EQ(golden_file_name("../etc/passwd"), "_.._etc_passwd.json");
  EXPECT_EQ(golden_file_name(".hidden"), "_.hidden.json");
  EXPECT_EQ(golden_file_name(""), "_.json");
}

TEST_F(GoldenBless, SplitsByExperimentAndStripsVolatileFields) {
  const EvidenceFile e{"e.json", evidence_of({run_of("greedy/a", "greedy", 5), run_of("sampling/b", "sampling", 6),
                                              run_of("greedy/c", "greedy", 7)})};
  const std::vector<GoldenFilePlan> plans = plan_bless(e, golden());
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].path, (dir_ / "golden" / "greedy.json").string());
  EXPECT_EQ(plans[0].runs, 2u);
  EXPECT_EQ(plans[0].doc["runs"][1]["id"], "greedy/c");
  ASSERT_EQ(plans[0].doc["experiments"].size(), 1u);
  EXPECT_EQ(plans[0].doc["experiments"][0]["name"], "greedy");
  EXPECT_FALSE(plans[0].doc.contains("created_utc"));
  EXPECT_FALSE(plans[0].doc["runs"][0].contains("timing"));
  EXPECT_FALSE(plans[0].doc["environment"]["threads"].contains("runs_concurrently"));
  EXPECT_FALSE(plans[0].exists);
  EXPECT_TRUE(plans[0].changes);
  EXPECT_EQ(plans[1].experiment, "sampling");
  EXPECT_EQ(format_bless_preview(plans).substr(0, 16), "new golden file ");
}

TEST_F(GoldenBless, WrittenGoldenAgreesAndUnchangedEvidenceWritesNothing) {
  const EvidenceFile e{"e.json", evidence_of({run_of("greedy/a", "greedy", 5), run_of("sampling/b", "sampling", 6)})};
  EXPECT_EQ(write_golden(plan_bless(e, golden())), 2u);
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
  EXPECT_EQ(read(dir_ / "golden" / "greedy.json").rfind("{\n  \"schema\": \"genrepro.evidence/1\",\n  \"genrepro\"", 0), 0u);

  const std::vector<GoldenFilePlan> again = plan_bless(e, golden());
  EXPECT_FALSE(again[0].changes);
  EXPECT_FALSE(again[1].changes);
  EXPECT_EQ(write_golden(again), 0u);
  EXPECT_THAT(format_bless_preview(again), HasSubstr("greedy.json: agrees, left as is, 1 runs"));
}

TEST_F(GoldenBless, ChangedRunShowsItsDiffBeforeWriting) {
  write_golden(plan_bless(EvidenceFile{"e.json", evidence_of({run_of("greedy/a", "greedy", 5)})}, golden()));
  const std::vector<GoldenFilePlan> plans = plan_bless(EvidenceFile{"e2.json", evidence_of({run_of("greedy/a", "greedy", 9)})}, golden());
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_TRUE(plans[0].exists);
  EXPECT_TRUE(plans[0].changes);
  EXPECT_THAT(plans[0].preview, HasSubstr("run greedy/a: "));
  EXPECT_THAT(plans[0].preview, HasSubstr("steps[0].token_id: 5 -> 9"));
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
}

TEST_F(GoldenBless, RunWithoutExperimentIsRefused) {
  Evidence doc = evidence_of({run_of("greedy/a", "greedy", 5)});
  doc.runs[0].experiment = "";
  try {
    plan_bless(EvidenceFile{"e.json", doc}, golden());
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("e.json: runs[0].experiment: expected the experiment's name"));
  }
}

}  // namespace
}  // namespace genrepro
