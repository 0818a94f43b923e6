#include "util/index_pool.hpp"

#include <atomic>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

TEST(IndexPool, EveryIndexRunsExactlyOnceWhateverTheThreadCount) {
  for (int threads : {1, 2, 5}) {
    std::vector<std::atomic<int>> calls(97);
    for_each_index(calls.size(), threads, [&](std::size_t k) { ++calls[k]; });
    for (std::size_t k = 0; k < calls.size(); ++k) EXPECT_EQ(calls[k].load(), 1) << "index " << k << ", threads " << threads;
  }
}

TEST(IndexPool, FirstErrorIsRethrownAndStopsNewJobs) {
  for (int threads : {1, 3}) {
    std::atomic<int> started{0};
    try {
      for_each_index(1000, threads, [&](std::size_t k) {
        ++started;
        if (k == 3) throw std::runtime_error("job 3 failed");
      });
      FAIL() << "expected the job's exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "job 3 failed");
    }
    // On one thread the order is fixed: jobs 0..3 ran and nothing after the failure started.
    // (With several, how many others start before the failure is seen depends on scheduling.)
    if (threads == 1) EXPECT_EQ(started.load(), 4);
  }
}

TEST(IndexPool, NoJobsIsFine) {
  int calls = 0;
  for_each_index(0, 4, [&](std::size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace genrepro
