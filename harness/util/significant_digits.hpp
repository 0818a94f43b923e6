#pragma once
// A number as people read it in a message or a table: three significant digits ("0.00312",
// "14.9", "1.28e+03"), the %.3g of every report and matrix that shows margins and deltas.
#include <cstdio>
#include <string>

namespace genrepro {

inline std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace genrepro
