#pragma once
// A CLI case as data: the arguments of one `genrepro` command and what its output must show,
// checked in-process (tests/support/cli_capture.hpp) against the engine linked into this binary.
// These cases were subprocess tests (tests/cli/*.cmake); tests/cli/README.md
// maps each old test name to its case here.
#include <string>
#include <vector>

#include "support/cli_capture.hpp"
#include "support/scratch_dir.hpp"

namespace genrepro::test {

// Where the test data lives (compile definitions from cmake/GenreproTesting.cmake).
std::string source_path(const std::string& relative);  // under the source tree
std::string tiny_model();                               // the tiny fixture model (ctest fixture tiny_model)
std::string broken_model(const std::string& name);      // a broken copy of it (ctest fixture broken_models)
std::string tokenizer_dir();                            // GPT-2's vocab.json and merges.txt

enum class Stderr { any_lines, one_line };

struct CliCase {
  std::string name;               // the gtest parameter name: the old ctest name's last part
  std::vector<std::string> args;  // "{scratch}" stands for the case's own scratch directory
  int exit;
  std::string stdout_regex;       // "" : stdout not checked
  std::string stderr_regex;       // "" : stderr not checked
  Stderr lines = Stderr::any_lines;
};

// Runs the case in a fresh scratch directory and checks the exit code exactly, both regexes
// (tests/support/text_match.hpp: Python's re.search with re.S), and with Stderr::one_line that
// stderr is exactly one non-blank line.
void expect_case(const CliCase& c);
// The case's arguments with "{scratch}" replaced, and the checks of expect_case on a result.
std::vector<std::string> case_args(const CliCase& c, const ScratchDir& scratch);
void expect_result(const CliCase& c, const std::vector<std::string>& args, const CliResult& r);

// `genrepro <args...>` in-process with the linked engine.
CliResult genrepro(const std::vector<std::string>& args, const CliInput& input = {});

// The bad-input contract of a verb that writes --out FILE: exit 2, one stderr line matching
// `regex`, and an existing FILE left byte-identical with nothing beside it. `args` is the
// command without --out; --out names a file in a scratch directory that already holds evidence.
void expect_bad_input_keeps_out(const std::vector<std::string>& args, const std::string& regex);

// For INSTANTIATE_TEST_SUITE_P: the case's name.
struct CaseName {
  template <class Info>
  std::string operator()(const Info& info) const {
    return info.param.name;
  }
};

}  // namespace genrepro::test
