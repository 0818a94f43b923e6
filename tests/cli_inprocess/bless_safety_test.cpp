// `genrepro bless` against a second bless and against a kill (docs/bless.md, "A second
// bless, and a kill"), and the dirty-tree check that counts only paths outside DIR. The evidence
// is tests/cli/data/diff/golden.json and one-edit copies of it.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "evidence/evidence.hpp"
#include "golden/golden_bless.hpp"
#include "golden/golden_journal.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kGolden = source_path("tests/cli/data/diff/golden.json");
// golden.json with the greedy run's last token changed to `token` (a sampler/RNG change to diff).
// Its step 2 is a near-tie (0.45001 vs 0.44999): the new token takes the best place, as a greedy
// pick must for the reader to accept the file.
std::string changed_evidence(const ScratchDir& dir, int token, const std::string& name) {
  json doc = json::parse(read_bytes(kGolden));
  for (json& r : doc["runs"]) {
    if (r["experiment"] != "greedy") continue;
    const std::string text = " t" + std::to_string(token);
    r["output_ids"][2] = token;
    r["text"] = "the river bank was t10 t20" + text;
    r["continuation"] = " t10 t20" + text;
    json& step = r["steps"][2];
    step["token_id"] = token;
    step["token_text"] = text;
    step["prob"] = step["prob_t1"] = 0.45001;
    step["top"] = json::array({{{"id", token}, {"text", text}, {"prob", 0.45001}, {"prob_scaled", 0.45001}},
                               {{"id", 30}, {"text", " t30"}, {"prob", 0.44999}, {"prob_scaled", 0.44999}}});
  }
  return dir.write(name, doc.dump(2));
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(BlessSafety, ASecondBlessWhileOneHoldsTheLockIsRefusedAndWritesNothing) {
  ScratchDir scratch("bless-lock");
  const std::string into = scratch / "golden";
  const GoldenDirLock held = GoldenDirLock::acquire(into);  // the first bless, still reviewing
  expect_case({"locked", {"bless", kGolden, "--into", into, "--yes"}, 2, "",
               R"re(^genrepro: error: --into .*golden: another genrepro bless is writing this golden directory; wait for it to finish)re",
               Stderr::one_line});
  EXPECT_TRUE(names_in(into).empty());
}

TEST(BlessSafety, TheControlWithoutAHolderBlesses) {
  ScratchDir scratch("bless-lock-control");
  const CliResult r = genrepro({"bless", kGolden, "--into", scratch / "golden", "--yes"});
  EXPECT_EQ(r.exit, 0) << describe({}, r);
  EXPECT_EQ(names_in(scratch / "golden"), (std::vector<std::string>{"blessed.tsv", "greedy.json", "sampling.json"}));
}

// A bless killed between its renames (stopped by the library's hook where a kill lands) is
// finished by the next `genrepro bless`, which then finds the golden holding the evidence.
TEST(BlessSafety, ABlessKilledBetweenRenamesIsFinishedByTheNext) {
  ScratchDir scratch("bless-kill");
  const std::string into = scratch / "golden";
  ASSERT_EQ(genrepro({"bless", kGolden, "--into", into, "--yes"}).exit, 0);
  const std::string e = changed_evidence(scratch, 31, "new.json");
  {
    const EvidenceFile evidence = read_evidence_file(e);
    const BlessPlan plan = plan_bless(evidence, into);
    BlessDecisions accept;
    for (const GoldenFilePlan& f : plan.files)
      for (const RunReview& r : f.runs)
        if (r.needs_decision()) accept.runs[r.id] = Decision::accept;
    struct Killed {};
    EXPECT_THROW(write_golden(plan, accept, BlessSource{"c1", false, e}, into, [](std::size_t) { throw Killed{}; }), Killed);
  }
  ASSERT_TRUE(fs::exists(fs::path(into) / kBlessJournalName));
  const CliResult next = genrepro({"bless", e, "--into", into, "--yes"});
  EXPECT_EQ(next.exit, 0) << describe({}, next);
  EXPECT_TRUE(Searches(R"re(^bless: finished an interrupted bless of .*golden \(2 file\(s\), 1 renamed now)re", next.out)) << next.out;
  EXPECT_TRUE(Searches(R"re(already holds every run of .*new\.json; nothing written)re", next.out)) << next.out;
  EXPECT_EQ(names_in(into), (std::vector<std::string>{"blessed.tsv", "greedy.json", "sampling.json"}));
  EXPECT_TRUE(Searches(R"re(\ngreedy.json\tc1\tclean\t)re", read_bytes(fs::path(into) / "blessed.tsv")));
}

// The dirty-tree check counts paths outside DIR only: a bless whose changes to DIR are not yet
// committed does not refuse the next one (it was refused naming golden/blessed.tsv as "outside").
TEST(BlessSafety, ASecondBlessAfterAnUncommittedFirstOneWorks) {
  ScratchDir scratch("bless-git");
  const fs::path repo = scratch.path() / "repo";
  scratch.write("repo/tracked.txt", "one\n");
  const std::string git = "git -C '" + repo.string() + "' -c user.name=t -c user.email=t@example.com ";
  ASSERT_EQ(std::system((git + "init -q && " + git + "add tracked.txt && " + git + "commit -qm init").c_str()), 0);
  const std::string into = (repo / "golden").string();
  ASSERT_EQ(genrepro({"bless", kGolden, "--into", into, "--yes"}).exit, 0);
  ASSERT_EQ(std::system((git + "add golden && " + git + "commit -qm golden").c_str()), 0);
  // The first bless, not committed: golden/greedy.json and golden/blessed.tsv differ from HEAD.
  const CliResult first = genrepro({"bless", changed_evidence(scratch, 31, "first.json"), "--into", into, "--yes"});
  ASSERT_EQ(first.exit, 0) << describe({}, first);
  const CliResult second = genrepro({"bless", changed_evidence(scratch, 32, "second.json"), "--into", into, "--yes"});
  EXPECT_EQ(second.exit, 0) << describe({}, second);
  EXPECT_TRUE(Searches(R"re(\ngreedy.json\t[0-9a-f]{40}\tclean\t.*second\.json)re", read_bytes(repo / "golden" / "blessed.tsv")));
  // The control: a change outside DIR still refuses.
  scratch.write("repo/tracked.txt", "two\n");
  expect_case({"dirty", {"bless", changed_evidence(scratch, 33, "third.json"), "--into", into, "--yes"}, 2, "",
               R"re(has uncommitted changes outside it \(tracked.txt\))re", Stderr::one_line});
}

TEST(BlessSafety, AGoldenOutsideGitIsRecordedAsNotInGit) {
  ScratchDir scratch("bless-nogit");
  ASSERT_EQ(genrepro({"bless", kGolden, "--into", scratch / "golden", "--yes"}).exit, 0);
  EXPECT_TRUE(Searches(R"re(\ngreedy.json\tnone \(not in a git work tree\)\tnot in git\t)re",
                       read_bytes(scratch.path() / "golden" / "blessed.tsv")));
}

}  // namespace
}  // namespace genrepro::test
