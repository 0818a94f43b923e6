#include "cli/interrupt.hpp"

#include <unistd.h>

namespace genrepro::cli {

namespace {

// Lock-free atomics are safe to touch from a signal handler; nothing else here is touched.
std::atomic<bool> g_requested{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

void on_signal(int signal_number) {
  // Only async-signal-safe calls: the next SIGINT or SIGTERM takes the default action (exit).
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  ::sigaction(SIGINT, &fallback, nullptr);
  ::sigaction(SIGTERM, &fallback, nullptr);
  g_signal.store(signal_number);
  g_requested.store(true);
  static const char kNotice[] =
      "\ngenrepro: stopping: no new runs start, the runs in flight finish; every finished run is kept "
      "(press Ctrl-C again to stop at once)\n";
  const ssize_t ignored = ::write(STDERR_FILENO, kNotice, sizeof kNotice - 1);
  (void)ignored;
}

}  // namespace

InterruptWatch::InterruptWatch() {
  g_requested.store(false);
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a read or write in flight carries on
  ::sigaction(SIGINT, &action, &previous_int_);
  ::sigaction(SIGTERM, &action, &previous_term_);
}

InterruptWatch::~InterruptWatch() {
  ::sigaction(SIGINT, &previous_int_, nullptr);
  ::sigaction(SIGTERM, &previous_term_, nullptr);
}

const std::atomic<bool>& InterruptWatch::requested() const { return g_requested; }

int InterruptWatch::signal_number() const { return g_signal.load(); }

std::string signal_name(int signal_number) {
  if (signal_number == SIGINT) return "SIGINT";
  if (signal_number == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal_number);
}

int interrupted_exit_code(int signal_number) { return 128 + signal_number; }

}  // namespace genrepro::cli
