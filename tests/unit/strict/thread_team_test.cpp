// The strict forward's thread team: every job runs exactly once whatever the team's size, the
// caller takes part, runs follow each other on the same workers, and a job's exception reaches the
// caller after the others have finished.
#include "strict/thread_team.hpp"

#include <atomic>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace genrepro::strict {
namespace {

TEST(StrictThreadTeam, EveryJobRunsOnceOnAnySize) {
  for (const int threads : {1, 2, 3}) {
    ThreadTeam team(threads);
    EXPECT_EQ(team.size(), threads);
    for (const size_t jobs : {size_t{0}, size_t{1}, size_t{5}, size_t{1000}}) {
      for (int round = 0; round < 3; ++round) {
        std::vector<std::atomic<int>> runs(jobs);
        team.run(jobs, [&](size_t i) { runs[i].fetch_add(1); });
        for (size_t i = 0; i < jobs; ++i) ASSERT_EQ(runs[i].load(), 1) << "threads " << threads << " job " << i;
      }
    }
  }
}

TEST(StrictThreadTeam, TheWorkersAreTheTeamsOwnAndTheCallerHelps) {
  ThreadTeam team(2);
  std::mutex m;
  std::set<std::thread::id> seen;
  std::atomic<int> waiting{0};
  // Two jobs that each wait for the other: they finish only if two threads run them at once.
  team.run(2, [&](size_t) {
    {
      std::lock_guard<std::mutex> lock(m);
      seen.insert(std::this_thread::get_id());
    }
    waiting.fetch_add(1);
    while (waiting.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen.count(std::this_thread::get_id()), 1u);
}

TEST(StrictThreadTeam, AJobsExceptionReachesTheCaller) {
  ThreadTeam team(2);
  std::atomic<int> finished{0};
  EXPECT_THROW(team.run(50,
                        [&](size_t i) {
                          if (i == 3) throw std::runtime_error("job 3");
                          finished.fetch_add(1);
                        }),
               std::runtime_error);
  EXPECT_LT(finished.load(), 50);
  // The team is usable afterwards.
  std::atomic<int> after{0};
  team.run(10, [&](size_t) { after.fetch_add(1); });
  EXPECT_EQ(after.load(), 10);
}

TEST(StrictThreadTeam, NoThreadsIsRefused) { EXPECT_THROW(ThreadTeam(0), std::invalid_argument); }

}  // namespace
}  // namespace genrepro::strict
