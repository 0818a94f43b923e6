#pragma once
// SIGINT and SIGTERM during a long verb (docs/resume.md). The first signal asks the
// work to stop at its next safe point (`run`: start no further runs, let those in flight finish;
// every finished run is already in the checkpoint). A second signal ends the process at once with
// the default action, which loses nothing either: the checkpoint is whole after every line.
//
// A signal handler can reach nothing but globals, so this file keeps the one piece of global
// state in genrepro, behind a scope: handlers are installed by InterruptWatch and the previous
// ones restored when it ends.
#include <atomic>
#include <csignal>
#include <string>

namespace genrepro::cli {

class InterruptWatch {
 public:
  InterruptWatch();
  ~InterruptWatch();
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;

  // True once SIGINT or SIGTERM has arrived; the runner polls it between runs.
  const std::atomic<bool>& requested() const;
  // The signal that arrived (SIGINT or SIGTERM), or 0.
  int signal_number() const;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

// "SIGINT", "SIGTERM", or "signal N".
std::string signal_name(int signal_number);
// The exit status of a verb stopped by `signal_number`: 128 + N, as shells report death by signal.
int interrupted_exit_code(int signal_number);

}  // namespace genrepro::cli
