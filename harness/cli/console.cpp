#include "cli/console.hpp"

#include <unistd.h>

#include <iostream>

namespace genrepro::cli {

Console Console::process() {
  return Console{std::cin, std::cout, std::cerr, ::isatty(STDIN_FILENO) == 1, ::isatty(STDERR_FILENO) == 1};
}

}  // namespace genrepro::cli
