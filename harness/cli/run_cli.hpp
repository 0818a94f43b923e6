#pragma once
// The whole command line as a function: parse `args` (without the program name), run the verb,
// return the exit code. The genrepro binary calls it with the process's streams and an engine
// loaded on demand (engine_loader.hpp); tests call it in-process with string streams.
#include <string>
#include <vector>

#include "cli/console.hpp"
#include "cli/verbs.hpp"

namespace genrepro::cli {

int run_cli(const std::vector<std::string>& args, Console& io, EngineVerbs& engine);

// Every integer-typed flag of every verb (CLI11 type INT or UINT), so a test can hold each one to
// the decimal-only rule (flag_kinds.hpp) without a list that a new flag could miss.
struct IntegerFlag {
  std::string verb;
  std::string flag;
  bool is_unsigned;
};
std::vector<IntegerFlag> integer_flags();

}  // namespace genrepro::cli
