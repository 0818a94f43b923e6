#pragma once
// genrepro's whole command line in-process: harness/cli/run_cli.hpp's run_cli with string streams
// in place of the process's, so a CLI case costs what the verb costs, not a process start (and,
// for the engine verbs, not libtorch's second of loading).
#include <string>
#include <vector>

#include "cli/verbs.hpp"

namespace genrepro::test {

// What the command reads: stdin's text and whether stdin / stderr count as a terminal (isatty in
// the real binary). The default is what ctest gives a subprocess: empty stdin, no terminal.
struct CliInput {
  std::string stdin_text;
  bool in_is_terminal = false;
  bool err_is_terminal = false;
};

struct CliResult {
  int exit = -1;
  std::string out;
  std::string err;
};

// Runs `genrepro <args...>` in this process with `engine` for the verbs that run the model.
CliResult run_genrepro(const std::vector<std::string>& args, cli::EngineVerbs& engine, const CliInput& input = {});

// The lines of `text` that are not blank (what "one line on stderr" counts, as the subprocess
// checker tests/cli/check_command.py does).
int nonblank_lines(const std::string& text);

// Everything about a result, for a failure message.
std::string describe(const std::vector<std::string>& args, const CliResult& r);

}  // namespace genrepro::test
