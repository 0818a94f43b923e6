// bless is safe against a second bless and against a kill (golden/golden_journal.hpp).
// A second bless of a locked directory is refused; a bless stopped between its renames (the test
// hook throws where a kill would land) is finished by the next one; files a bless left before it
// had decided are removed; a golden outside git is recorded as "not in git".
#include "golden/golden_journal.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "golden/golden_bless.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Killed {};  // thrown by the test hook where a kill would stop the bless

RunRecord run_of(const std::string& id, const std::string& experiment, int64_t token) {
  return test::make_run(id, DecodeMode::greedy, {test::make_step(0, token, {{token, 0.5}})}, experiment);
}

// Evidence the reader accepts: ids, specs and prompts as run makes them (the consistency layer).
Evidence consistent_evidence(std::vector<RunRecord> runs) {
  Evidence e = test::make_evidence(std::move(runs));
  test::make_consistent(e);
  return e;
}

BlessDecisions accept_all(const BlessPlan& plan) {
  BlessDecisions d;
  for (const GoldenFilePlan& f : plan.files)
    for (const RunReview& r : f.runs)
      if (r.needs_decision()) d.runs[r.id] = Decision::accept;
  return d;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class BlessLock : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("genrepro_bless_lock_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string golden() const { return (dir_ / "golden").string(); }
  fs::path dir_;
};

TEST_F(BlessLock, ASecondBlessOfALockedDirectoryIsRefused) {
  const GoldenDirLock held = GoldenDirLock::acquire(golden());
  // flock is per open file description: another process (a fork) is refused while this one holds it.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      GoldenDirLock::acquire(golden());
      ::_exit(1);  // acquired: the lock did not hold
    } catch (const UsageError& e) {
      ::_exit(std::string(e.what()).find("another genrepro bless is writing this golden directory") != std::string::npos ? 0 : 2);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the second lock was granted; 2: refused with another message";
}

TEST_F(BlessLock, TheLockIsFreeAgainAfterTheBlessAndAnUnusedNewDirectoryGoes) {
  { const GoldenDirLock first = GoldenDirLock::acquire(golden()); }
  EXPECT_FALSE(fs::exists(golden())) << "a directory the lock made and nothing was written into is removed";
  fs::create_directories(golden());
  { const GoldenDirLock again = GoldenDirLock::acquire(golden()); }
  EXPECT_TRUE(fs::exists(golden())) << "a directory that was there stays";
}

// The kill between two renames: the first golden file is new, the second and the record are not.
// The next bless finishes the journal: all three are the new ones, nothing is left beside them.
TEST_F(BlessLock, AKillBetweenRenamesIsFinishedByTheNextBless) {
  const EvidenceFile old_e{"old.json", consistent_evidence({run_of("x/a", "x", 1), run_of("y/a", "y", 2)})};
  const BlessPlan first = plan_bless(old_e, golden());
  write_golden(first, accept_all(first), BlessSource{"c0", false, "old.json"}, golden());
  const std::string old_y = read(dir_ / "golden" / "y.json");
  const std::string old_record = read(dir_ / "golden" / kBlessRecordName);

  const EvidenceFile new_e{"new.json", consistent_evidence({run_of("x/a", "x", 3), run_of("y/a", "y", 4)})};
  const BlessPlan second = plan_bless(new_e, golden());
  EXPECT_THROW(write_golden(second, accept_all(second), BlessSource{"c1", false, "new.json"}, golden(),
                            [](std::size_t renamed) {
                              if (renamed == 0) throw Killed{};
                            }),
               Killed);
  // As the kill left it: x.json new, y.json and the record old, the journal and two staged files.
  EXPECT_EQ(read(dir_ / "golden" / "y.json"), old_y);
  EXPECT_EQ(read(dir_ / "golden" / kBlessRecordName), old_record);
  EXPECT_TRUE(fs::exists(dir_ / "golden" / kBlessJournalName));

  const std::vector<std::string> done = recover_interrupted_bless(golden());
  ASSERT_EQ(done.size(), 1u);
  EXPECT_THAT(done[0], HasSubstr("finished an interrupted bless of " + golden() + " (3 file(s), 2 renamed now"));
  EXPECT_EQ(names_in(dir_ / "golden"), (std::vector<std::string>{"blessed.tsv", "x.json", "y.json"}));
  EXPECT_NE(read(dir_ / "golden" / "y.json"), old_y);
  EXPECT_THAT(read(dir_ / "golden" / kBlessRecordName), HasSubstr("\ny.json\tc1\tclean\tnew.json\t"));
  // The finished golden is the new evidence, and a second recovery has nothing to do.
  EXPECT_EQ(plan_bless(new_e, golden()).count(RunChange::unchanged), 2u);
  EXPECT_TRUE(recover_interrupted_bless(golden()).empty());
}

// A bless killed while staging (before its journal) had not decided: its files are removed and
// the golden is as it was.
TEST_F(BlessLock, FilesOfABlessKilledBeforeItsJournalAreRemoved) {
  fs::create_directories(golden());
  std::ofstream(dir_ / "golden" / "x.json") << "{}\n";
  std::ofstream(dir_ / "golden" / ".x.json.bless-new") << "half";
  std::ofstream(dir_ / "golden" / ".blessed.tsv.tmp-Ab12Cd") << "half";
  std::ofstream(dir_ / "golden" / ".keep-me") << "not bless's";
  const std::vector<std::string> done = recover_interrupted_bless(golden());
  EXPECT_EQ(done.size(), 2u);
  EXPECT_EQ(names_in(dir_ / "golden"), (std::vector<std::string>{".keep-me", "x.json"}));
  EXPECT_EQ(read(dir_ / "golden" / "x.json"), "{}\n");
}

TEST_F(BlessLock, AJournalThatNamesAPathOutsideTheDirectoryIsRefused) {
  fs::create_directories(golden());
  std::ofstream(dir_ / "golden" / kBlessJournalName)
      << "# genrepro bless journal 1: staged file, then the file it replaces\n.x.bless-new\t../outside\n# end\n";
  try {
    recover_interrupted_bless(golden());
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr(".bless-journal: the journal of an interrupted bless has a line that is not"));
  }
}

TEST_F(BlessLock, AGoldenOutsideGitIsRecordedAsNotInGit) {
  const EvidenceFile e{"e.json", consistent_evidence({run_of("x/a", "x", 1)})};
  const BlessPlan plan = plan_bless(e, golden());
  BlessSource source{"none (not in a git work tree)", false, "e.json"};
  source.in_git = false;
  write_golden(plan, accept_all(plan), source, golden());
  EXPECT_THAT(read(dir_ / "golden" / kBlessRecordName), HasSubstr("\nx.json\tnone (not in a git work tree)\tnot in git\te.json\t"));
}

}  // namespace
}  // namespace genrepro
