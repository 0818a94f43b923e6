#pragma once
// Items joined by a separator, for messages ("allowed: one of a, b, c").
#include <string>
#include <vector>

namespace genrepro {

inline std::string joined(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace genrepro
