// bless's library side: one golden file per experiment, volatile fields stripped, the preview
// diff against what the directory holds, atomic writes that leave an old golden intact on failure.
#include "evidence/golden_bless.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using Json = EvidenceJson;
using ::testing::HasSubstr;

Json run_of(const std::string& id, const std::string& experiment, int64_t token) {
  const Json step{{"step", 0},        {"token_id", token}, {"token_text", " x"},   {"prob", 0.5},
                  {"prob_t1", 0.5},   {"kept", 1},         {"top", {{{"id", token}, {"text", " x"}, {"prob", 0.5}, {"prob_scaled", 0.5}}}},
                  {"rest_mass", 0.5}, {"margin", 0.5},     {"logit_margin", 1.0}, {"entropy", 0.7}};
  return Json{{"id", id},
              {"experiment", experiment},
              {"prompt", "p"},
              {"params", {{"mode", "greedy"}, {"max_new_tokens", 1}}},
              {"prompt_ids", {1}},
              {"output_ids", {token}},
              {"text", "p x"},
              {"continuation", " x"},
              {"stop", {{"reason", "max_new_tokens"}, {"step", 1}}},
              {"steps", {step}},
              {"timing", {{"seconds", 0.1}}}};
}

Json evidence_of(const std::vector<Json>& runs) {
  return Json{{"schema", "genrepro.evidence/1"},
              {"created_utc", "2026-11-30T12:00:00Z"},
              {"environment", {{"threads", {{"intra_op", 1}, {"runs_concurrently", 2}}}}},
              {"experiments", {{{"name", "greedy"}, {"path", "g.json"}}, {{"name", "sampling"}, {"path", "s.json"}}}},
              {"runs", runs}};
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
  EXPECT_TRUE(diff_evidence(load_golden(golden()), e, {}).agree());
  // Keys keep the writer's order, so a golden reads like the evidence it came from.
  EXPECT_EQ(read(dir_ / "golden" / "greedy.json").rfind("{\n  \"schema\": \"genrepro.evidence/1\",\n  \"environment\"", 0), 0u);

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
    write_json_atomically((dir_ / "golden" / "greedy.json").string(), Json{{"schema", "x"}});
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
  Json doc = evidence_of({run_of("greedy/a", "greedy", 5)});
  doc["runs"][0].erase("experiment");
  try {
    plan_bless(EvidenceFile{"e.json", doc}, golden());
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("e.json: runs[0].experiment: expected the experiment's name"));
  }
}

}  // namespace
}  // namespace genrepro
