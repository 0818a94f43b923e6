#include "cli/crash_guard.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>
#include <exception>
#include <string>

#include "cli/verbs.hpp"

namespace genrepro::cli {

namespace {

// Only async-signal-safe calls in here: write(2) and _exit(2).
void write_stderr(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                   : sig == SIGILL  ? "SIGILL"  : sig == SIGABRT ? "SIGABRT" : "a fatal signal";
  write_stderr("\ngenrepro: internal error (please report): the process received ");
  write_stderr(name);
  write_stderr("\n");
  ::_exit(kExitInternal);
}

[[noreturn]] void on_terminate() {
  std::string what = "std::terminate without an active exception";
  if (const std::exception_ptr current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& e) {
      what = std::string("uncaught exception: ") + e.what();
    } catch (...) {
      what = "uncaught exception of unknown type";
    }
  }
  what = what.substr(0, what.find('\n'));
  write_stderr(("genrepro: internal error (please report): " + what + "\n").c_str());
  ::_exit(kExitInternal);
}

}  // namespace

void install_crash_guard() {
  std::set_terminate(on_terminate);
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second fault inside the handler ends the process plainly
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(sig, &action, nullptr);
}

}  // namespace genrepro::cli
