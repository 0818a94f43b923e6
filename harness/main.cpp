// The genrepro command. It links no libtorch: the verbs that run the model load the engine
// library on first use (cli/engine_loader.hpp).
#include <string>
#include <vector>

#include "cli/console.hpp"
#include "cli/crash_guard.hpp"
#include "cli/engine_loader.hpp"
#include "cli/run_cli.hpp"

int main(int argc, char** argv) {
  using namespace genrepro::cli;
  install_crash_guard();
  Console io = Console::process();
  const auto engine = engine_loaded_on_first_use();
  return run_cli(std::vector<std::string>(argv + 1, argv + argc), io, *engine);
}
