#pragma once
// A double as the evidence writes it: shortest round-trip text, and the writer's strings for the
// non-finite values ("NaN", "Infinity", "-Infinity"). How the reader's messages show a value found.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

namespace genrepro {

inline std::string json_number(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  return nlohmann::json(v).dump();
}

}  // namespace genrepro
