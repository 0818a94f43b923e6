// bless --update: after a deliberate parameter change, one command accepts the new runs and
// retires exactly the golden runs they replaced (paired by cell: experiment, prompt, seed,
// position), listing each with its replacement and the change; a golden run the evidence only
// lacks stays unless --prune.
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

namespace fs = std::filesystem;
using nlohmann::json;

class BlessUpdate : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir("bless-update");
    old_runs_ = run_grid("old", 0.9, {1, 2, 3});
    new_runs_ = run_grid("new", 0.95, {1, 2});
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static std::string run_grid(const std::string& name, double top_p, const std::vector<int>& seeds) {
    const json spec = {{"name", "cells"},
                       {"prompts", {"the river bank was"}},
                       {"max_new_tokens", 2},
                       {"runs", {{{"mode", "sample"}, {"top_p", top_p}, {"seed", seeds}}}}};
    const std::string out = *scratch_ / (name + ".json");
    const CliResult r = genrepro({"run", scratch_->write(name + "-spec.json", spec.dump()), "--model", tiny_model(), "--out", out});
    EXPECT_EQ(r.exit, 0) << r.err;
    return out;
  }
  // The golden's run ids, sorted (a kept run stays where it was in its file; the order is bless's).
  static std::vector<std::string> sorted_ids(const std::string& file) {
    std::vector<std::string> out = ids(file);
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<std::string> sorted(std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  }
  static std::vector<std::string> ids(const std::string& file) {
    std::vector<std::string> out;
    const json doc = json::parse(read_bytes(file));
    for (const json& r : doc["runs"]) out.push_back(r["id"]);
    return out;
  }
  std::string blessed_old(const std::string& name) {
    const std::string into = *scratch_ / name;
    EXPECT_EQ(genrepro({"bless", old_runs_, "--into", into, "--yes"}).exit, 0);
    return into;
  }
  static ScratchDir* scratch_;
  static std::string old_runs_, new_runs_;
};
ScratchDir* BlessUpdate::scratch_ = nullptr;
std::string BlessUpdate::old_runs_, BlessUpdate::new_runs_;

TEST_F(BlessUpdate, RetiresTheReplacedIdsAndKeepsTheOnesTheEvidenceOnlyLacks) {
  const std::vector<std::string> old_ids = ids(old_runs_), new_ids = ids(new_runs_);
  ASSERT_EQ(old_ids.size(), 3u);
  ASSERT_EQ(new_ids.size(), 2u);
  const std::string into = blessed_old("update");
  const CliResult r = genrepro({"bless", new_runs_, "--into", into, "--update"});
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  // Each retired run is named with its replacement and the change; the seed-3 run has no new run
  // of its cell, so it is kept.
  for (int i = 0; i < 2; ++i)
    EXPECT_TRUE(Searches("missing run " + old_ids[i] + ": in the golden, not in the evidence: retired, replaced by new run " +
                             new_ids[i] + " of its cell \\(parameter change: top_p 0.9 → 0.95\\)",
                         r.out))
        << r.out;
  EXPECT_TRUE(Searches("missing run " + old_ids[2] + ": in the golden, not in the evidence: kept \\(--prune removes it\\)", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(bless: retiring 2 golden run\(s\) that an accepted new run of their cell replaced \(top_p 0.9 → 0.95\))re", r.out))
      << r.out;
  EXPECT_TRUE(Searches(R"re(changes: 2 new, 2 retired \(replaced by a new run of their cell\), 1 missing from the evidence \(kept\))re", r.out))
      << r.out;
  EXPECT_EQ(sorted_ids(into + "/cells.json"), sorted({new_ids[0], new_ids[1], old_ids[2]}));
  // The gate now fails only for the run the evidence lacks.
  const CliResult d = genrepro({"diff", into, new_runs_, "--brief"});
  EXPECT_EQ(d.exit, 1) << d.out;
  EXPECT_TRUE(Searches(R"re(2 agree, 0 differ; 1 missing, 0 extra)re", d.out)) << d.out;
}

TEST_F(BlessUpdate, WithPruneEveryMissingRunGoesAndTheGateIsGreen) {
  const std::string into = blessed_old("update-prune");
  const CliResult r = genrepro({"bless", new_runs_, "--into", into, "--update", "--prune"});
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_EQ(ids(into + "/cells.json"), ids(new_runs_));
  EXPECT_EQ(genrepro({"diff", into, new_runs_}).exit, 0);
}

TEST_F(BlessUpdate, YesAloneKeepsTheOldIdsAndNamesUpdate) {
  const std::string into = blessed_old("yes");
  const CliResult r = genrepro({"bless", new_runs_, "--into", into, "--yes"});
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_TRUE(Searches(R"re(kept: --prune retires them \(and every other missing run\); --update retires only these)re", r.out)) << r.out;
  EXPECT_EQ(ids(into + "/cells.json").size(), 5u);
}

TEST_F(BlessUpdate, WithRunOnlyTheNamedRunsReplacementIsRetired) {
  const std::vector<std::string> old_ids = ids(old_runs_), new_ids = ids(new_runs_);
  const std::string into = blessed_old("update-run");
  const CliResult r = genrepro({"bless", new_runs_, "--into", into, "--update", "--run", new_ids[1]});
  EXPECT_EQ(r.exit, 1) << r.out << r.err;  // the other new run was skipped
  EXPECT_EQ(sorted_ids(into + "/cells.json"), sorted({old_ids[0], new_ids[1], old_ids[2]}));
}

}  // namespace
}  // namespace genrepro::test
