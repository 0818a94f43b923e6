#pragma once
// Where a verb reads and writes: the process's standard streams, or strings in a test. Passing
// it explicitly (instead of touching std::cout) is what lets every verb run in-process, and what
// lets a verb ask "is a person watching?" without reaching for isatty itself.
#include <istream>
#include <ostream>

namespace genrepro::cli {

struct Console {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  bool in_is_terminal = false;   // bless asks only a person at a terminal
  bool err_is_terminal = false;  // progress bars are drawn only for a person watching

  // std::cin/cout/cerr, with isatty(0) and isatty(2).
  static Console process();
};

}  // namespace genrepro::cli
