#pragma once
// The last line of defence of the genrepro process: a crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
// SIGABRT) or std::terminate (an exception escaping a thread, a noexcept violation) never shows
// a core dump message or a backtrace to the user: one line on stderr and exit 3, the code for
// "a bug in genrepro". run_cli already turns every exception of the verbs into exit 2 or 3; this
// catches what escapes it.
namespace genrepro::cli {

// Installs the handlers for the rest of the process. Call once, from main.
void install_crash_guard();

}  // namespace genrepro::cli
