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

}  // namespace genrepro::cli
