#pragma once
// Progress of a long `genrepro run` on stderr: runs done / total, tokens per second and the time
// left, redrawn on one line. Only for a person watching: when stderr is not a terminal, or CI is
// set, or TERM is dumb, it stays silent so logs and tests see exactly the one-line errors.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

namespace genrepro {

// stderr is a terminal, not CI (CI set to anything but "" / "0" / "false"), TERM not "dumb".
bool progress_wanted(bool stderr_is_terminal);

// One progress line, e.g. "genrepro: run 3/12, 41.2 tokens/s, about 0:12 left".
std::string progress_line(int64_t done, int64_t total, int64_t tokens, double elapsed_seconds);

class Progress {
 public:
  Progress(int64_t total_runs, bool enabled, std::ostream& out);
  // Called by any worker thread when a run has finished with `tokens` new tokens.
  void run_finished(int64_t tokens);
  // Ends the line (when anything was drawn).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mutex_;
  int64_t total_;
  int64_t done_ = 0;
  int64_t tokens_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::ostream& out_;
  Clock::time_point start_ = Clock::now();
};

}  // namespace genrepro
