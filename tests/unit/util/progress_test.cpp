// Progress: the line's arithmetic (hand-computed), and silence when not wanted.
#include "util/progress.hpp"

#include <unistd.h>

#include <sstream>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

TEST(Progress, LineArithmetic) {
  // 3 of 12 runs in 30 s: 10 s per run, 9 runs left -> 90 s = 1:30; 1200 tokens / 30 s = 40/s.
  EXPECT_EQ(progress_line(3, 12, 1200, 30.0), "genrepro: run 3/12, 40.0 tokens/s, about 1:30 left");
  EXPECT_EQ(progress_line(0, 12, 0, 0.0), "genrepro: run 0/12");
  EXPECT_EQ(progress_line(12, 12, 600, 7.5), "genrepro: run 12/12, 80.0 tokens/s, about 0:00 left");
}

TEST(Progress, DisabledWritesNothing) {
  std::ostringstream out;
  Progress p(3, ProgressStyle::none, out);
  p.run_finished(5);
  p.finish();
  EXPECT_EQ(out.str(), "");
}

TEST(Progress, EnabledRedrawsOneLine) {
  std::ostringstream out;
  Progress p(2, ProgressStyle::live, out);
  p.run_finished(5);
  p.run_finished(5);
  p.finish();
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("\rgenrepro: run 1/2", 0), 0u) << s;
  EXPECT_NE(s.find("\rgenrepro: run 2/2"), std::string::npos) << s;
  EXPECT_EQ(s.back(), '\n');
}

TEST(Progress, LogStylePrintsPlainLinesAtMostEveryInterval) {
  // A hand-driven clock: runs finish at 0.1 s, 5 s, 10.5 s, 12 s, 21 s; lines at 10.5 and 21 only,
  // then finish() prints the last state once.
  Progress::Clock::time_point t{};
  std::ostringstream out;
  Progress p(6, ProgressStyle::log, out, [&t] { return t; });
  for (double at : {0.1, 5.0, 10.5, 12.0, 21.0}) {
    t = Progress::Clock::time_point{} + std::chrono::duration_cast<Progress::Clock::duration>(std::chrono::duration<double>(at));
    p.run_finished(10);
  }
  p.finish();
  EXPECT_EQ(out.str(),
            "genrepro: run 3/6, 2.9 tokens/s, about 0:11 left\n"  // 3.5 s a run x 3 left = 10.5 s
            "genrepro: run 5/6, 2.4 tokens/s, about 0:04 left\n"
            "genrepro: run 5/6, 2.4 tokens/s, about 0:04 left\n");
}

TEST(Progress, LogStyleQuietForAShortRun) {
  std::ostringstream out;
  Progress p(3, ProgressStyle::log, out);
  p.run_finished(5);
  p.run_finished(5);
  p.finish();
  EXPECT_EQ(out.str(), "") << "a run shorter than the interval prints no progress";
}

TEST(Progress, StyleFollowsTheTerminal) {
  ::unsetenv("CI");
  ::setenv("TERM", "xterm", 1);
  EXPECT_EQ(progress_style(true), ProgressStyle::live);
  EXPECT_EQ(progress_style(false), ProgressStyle::log);
}

TEST(Progress, NotWantedWhenStderrIsNotATerminal) { EXPECT_FALSE(progress_wanted(false)); }

TEST(Progress, NotWantedInCiOrOnADumbTerminal) {
  // setenv here is this test process's own; the other tests never read CI or TERM.
  ::setenv("CI", "true", 1);
  ::setenv("TERM", "xterm", 1);
  EXPECT_FALSE(progress_wanted(true));
  ::setenv("CI", "false", 1);
  EXPECT_TRUE(progress_wanted(true));
  ::setenv("TERM", "dumb", 1);
  EXPECT_FALSE(progress_wanted(true));
  ::unsetenv("CI");
}

}  // namespace
}  // namespace genrepro
