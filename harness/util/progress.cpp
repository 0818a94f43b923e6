#include "util/progress.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace genrepro {

bool progress_wanted(bool stderr_is_terminal) {
  if (!stderr_is_terminal) return false;
  const char* ci = std::getenv("CI");
  if (ci != nullptr && std::strcmp(ci, "") != 0 && std::strcmp(ci, "0") != 0 && std::strcmp(ci, "false") != 0) return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::strcmp(term, "dumb") != 0;
}

std::string progress_line(int64_t done, int64_t total, int64_t tokens, double elapsed_seconds) {
  char text[160];
  const double rate = elapsed_seconds > 0 ? static_cast<double>(tokens) / elapsed_seconds : 0.0;
  if (done <= 0 || elapsed_seconds <= 0) {
    std::snprintf(text, sizeof text, "genrepro: run %lld/%lld", static_cast<long long>(done), static_cast<long long>(total));
    return text;
  }
  // Runs of one grid cost about the same, so the time left scales with the runs left.
  const double left = elapsed_seconds / static_cast<double>(done) * static_cast<double>(total - done);
  const long long left_s = std::llround(left);
  std::snprintf(text, sizeof text, "genrepro: run %lld/%lld, %.1f tokens/s, about %lld:%02lld left",
                static_cast<long long>(done), static_cast<long long>(total), rate, left_s / 60, left_s % 60);
  return text;
}

ProgressStyle progress_style(bool stderr_is_terminal) {
  return progress_wanted(stderr_is_terminal) ? ProgressStyle::live : ProgressStyle::log;
}

Progress::Progress(int64_t total_runs, ProgressStyle style, std::ostream& out, std::function<Clock::time_point()> now)
    : total_(total_runs), style_(style), out_(out), now_(std::move(now)), start_(now_()), last_log_(start_) {}

void Progress::run_finished(int64_t tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  tokens_ += tokens;
  if (style_ == ProgressStyle::none) return;
  const Clock::time_point now = now_();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (style_ == ProgressStyle::live) {
    // \r and "erase to end of line" redraw in place.
    out_ << '\r' << progress_line(done_, total_, tokens_, elapsed) << "\x1b[K" << std::flush;
    drawn_ = true;
    return;
  }
  if (now - last_log_ < kLogInterval) return;
  out_ << progress_line(done_, total_, tokens_, elapsed) << '\n' << std::flush;
  last_log_ = now;
  logged_ = true;
}

void Progress::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (drawn_) out_ << '\n' << std::flush;
  drawn_ = false;
  if (logged_ && style_ == ProgressStyle::log) {
    const double elapsed = std::chrono::duration<double>(now_() - start_).count();
    out_ << progress_line(done_, total_, tokens_, elapsed) << '\n' << std::flush;
    logged_ = false;
  }
}

}  // namespace genrepro
