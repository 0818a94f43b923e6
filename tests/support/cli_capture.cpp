#include "support/cli_capture.hpp"

#include <sstream>

#include "cli/console.hpp"
#include "cli/run_cli.hpp"

namespace genrepro::test {

CliResult run_genrepro(const std::vector<std::string>& args, cli::EngineVerbs& engine, const CliInput& input) {
  std::istringstream in(input.stdin_text);
  std::ostringstream out;
  std::ostringstream err;
  cli::Console io{in, out, err, input.in_is_terminal, input.err_is_terminal};
  CliResult r;
  r.exit = cli::run_cli(args, io, engine);
  r.out = out.str();
  r.err = err.str();
  return r;
}

int nonblank_lines(const std::string& text) {
  int n = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(" \t\r\f\v") != std::string::npos) ++n;
  return n;
}

std::string describe(const std::vector<std::string>& args, const CliResult& r) {
  std::string s = "genrepro";
  for (const std::string& a : args) s += " '" + a + "'";
  constexpr std::size_t kShown = 4000;  // enough for every verb's output in these tests
  const auto tail = [](const std::string& t) { return t.size() > kShown ? "..." + t.substr(t.size() - kShown) : t; };
  return s + "\nexit " + std::to_string(r.exit) + "\n--- stdout ---\n" + tail(r.out) + "\n--- stderr ---\n" + tail(r.err);
}

}  // namespace genrepro::test
