#pragma once
// Progress of a long `genrepro run` or `replay` on stderr: runs done / total, tokens per second
// and the time left. For a person at a terminal it is one line redrawn in place; in a CI log (not
// a terminal, or CI set, or TERM dumb) it is a plain line at most every kLogInterval, so the log
// never looks hung and never fills with redraws; a run shorter than that prints none.
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>

namespace genrepro {

// stderr is a terminal, not CI (CI set to anything but "" / "0" / "false"), TERM not "dumb".
bool progress_wanted(bool stderr_is_terminal);

enum class ProgressStyle {
  none,  // silent
  live,  // one line redrawn in place (\r), for a terminal
  log,   // a plain line at most every kLogInterval, for CI logs
};
// live when progress_wanted(stderr_is_terminal), else log.
ProgressStyle progress_style(bool stderr_is_terminal);

// A CI log gets a progress line at most this often: often enough that a job is seen to be
// alive, rarely enough that a long grid's log stays readable.
inline constexpr std::chrono::seconds kLogInterval{10};

// One progress line, e.g. "genrepro: run 3/12, 41.2 tokens/s, about 0:12 left".
std::string progress_line(int64_t done, int64_t total, int64_t tokens, double elapsed_seconds);

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  Progress(int64_t total_runs, ProgressStyle style, std::ostream& out,
           std::function<Clock::time_point()> now = Clock::now);
  // Called by any worker thread when a run has finished with `tokens` new tokens.
  void run_finished(int64_t tokens);
  // Ends the line (when anything was drawn).
  void finish();

 private:
  std::mutex mutex_;
  int64_t total_;
  int64_t done_ = 0;
  int64_t tokens_ = 0;
  ProgressStyle style_;
  bool drawn_ = false;   // live: a line is on screen that finish() must end
  bool logged_ = false;  // log: a line was printed, so finish() prints the last one
  std::ostream& out_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_;
  Clock::time_point last_log_;
};

}  // namespace genrepro
