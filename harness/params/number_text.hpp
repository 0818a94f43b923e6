#pragma once
// How the params layer's messages and run ids write a double: the shortest form that reads back as
// the same double, the way a user would have typed it.
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>

namespace genrepro {

// Prints a double the way a user would have typed it back (shortest form that round-trips);
// infinities as JSON-ish words (a logit bias of -Infinity masks a token).
inline std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream out;
    out.precision(digits);
    out << v;
    if (std::isnan(v) || std::strtod(out.str().c_str(), nullptr) == v) return out.str();
  }
  return std::to_string(v);
}

}  // namespace genrepro
