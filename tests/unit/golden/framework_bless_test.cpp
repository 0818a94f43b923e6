// bless on framework runs: a run whose framework or a control of its chain changed has
// a new id, so the review sees a new run and a missing one; bless pairs them by their experiment
// cell and names the change on both lines, framework keys included. Evidence: the real binary's
// (tests/data/frameworks/README.md).
#include <algorithm>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "golden/golden_bless.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kData = std::string(GENREPRO_SOURCE_DIR) + "/tests/data/frameworks/";

class FrameworkBless : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("genrepro_framework_bless_" +
                                             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // What `bless golden.json --into DIR` would have left: the golden evidence as DIR/<experiment>.json.
    fs::copy_file(kData + "golden.json", dir_ / "framework-diff.json");
  }
  void TearDown() override { fs::remove_all(dir_); }
  BlessPlan plan() const { return plan_bless(read_evidence_file(kData + "new.json"), dir_.string()); }
  static const RunReview& review(const GoldenFilePlan& f, const std::string& id) {
    const auto it = std::find_if(f.runs.begin(), f.runs.end(), [&](const RunReview& r) { return r.id == id; });
    if (it == f.runs.end()) throw std::logic_error("no review of " + id);
    return *it;
  }
  static std::string id_at(const std::string& file, int64_t index) {
    for (const RunRecord& r : read_evidence(kData + file).runs)
      if (r.index == index) return r.id;
    throw std::logic_error("no run at " + std::to_string(index));
  }
  fs::path dir_;
};

TEST_F(FrameworkBless, ANewRunAndTheGoldenRunItReplacesNameEachOtherAndTheChange) {
  const BlessPlan p = plan();
  ASSERT_EQ(p.files.size(), 1u);
  const GoldenFilePlan& f = p.files[0];
  EXPECT_EQ(f.count(RunChange::unchanged), 2u);  // the two runs both files share
  EXPECT_EQ(f.count(RunChange::added), 3u);
  EXPECT_EQ(f.count(RunChange::missing), 3u);

  const RunReview& added = review(f, id_at("new.json", 1));  // hf, repetition_penalty 1.3
  ASSERT_TRUE(added.paired_with.has_value());
  EXPECT_EQ(*added.paired_with, id_at("golden.json", 1));
  EXPECT_EQ(added.paired_change, "repetition_penalty 1.0 \u2192 1.3");
  const RunReview& missing = review(f, id_at("golden.json", 1));
  ASSERT_TRUE(missing.paired_with.has_value());
  EXPECT_EQ(*missing.paired_with, added.id);

  const std::string added_line = format_run_line(f, added, false);
  EXPECT_THAT(added_line, HasSubstr("framework-diff.json: new run " + added.id + ": not in the golden; 6 new tokens"));
  EXPECT_THAT(added_line, HasSubstr("; replaces golden run " + missing.id + " of its cell (parameter change: repetition_penalty 1.0 \u2192 1.3)"));
  EXPECT_THAT(format_run_line(f, missing, false),
              HasSubstr("kept (--prune removes it); replaced by new run " + added.id + " (parameter change: repetition_penalty 1.0 \u2192 1.3)"));

  const RunReview& llama = review(f, id_at("new.json", 0));  // the article run, now llama.cpp
  EXPECT_THAT(llama.paired_change, HasSubstr("framework \"article\" \u2192 \"llama.cpp\""));
  EXPECT_THAT(llama.paired_change, HasSubstr("min_p 0.0 \u2192 0.05"));

  const std::string preview = format_bless_preview(p, false);
  EXPECT_THAT(preview, HasSubstr("parameter change: min_p 0.05 \u2192 0.1"));
  EXPECT_THAT(preview, HasSubstr("framework \"article\" \u2192 \"llama.cpp\""));
  EXPECT_THAT(preview, Not(HasSubstr("unchanged run")));
}

// Pairing names; it decides nothing: what is written is what the decisions say, as before.
TEST_F(FrameworkBless, PairingChangesNoDecision) {
  const BlessPlan p = plan();
  BlessDecisions d;
  for (const RunReview& r : p.files[0].runs)
    if (r.needs_decision()) d.runs[r.id] = Decision::accept;
  const std::optional<OrderedJson> doc = compose_golden(p.files[0], d);
  ASSERT_TRUE(doc.has_value());
  // Accepted new runs come in; the replaced golden runs stay (no --prune): 5 + 3.
  EXPECT_EQ((*doc)["runs"].size(), 8u);
}

// A golden without a partner for a new run says nothing of a pair.
TEST_F(FrameworkBless, AnUnpairedNewRunNamesNoPartner) {
  fs::remove(dir_ / "framework-diff.json");
  const BlessPlan p = plan();
  for (const RunReview& r : p.files[0].runs) {
    EXPECT_FALSE(r.paired_with.has_value()) << r.id;
    EXPECT_THAT(format_run_line(p.files[0], r, false), Not(HasSubstr("replaces")));
  }
}

}  // namespace
}  // namespace genrepro
