#include "util/text_excerpt.hpp"

#include <nlohmann/json.hpp>

#include "util/utf8.hpp"

namespace genrepro {

std::string quoted_excerpt(std::string_view text, std::size_t max_bytes) {
  std::string shown = nlohmann::json(replace_invalid_utf8(text.substr(0, max_bytes)))
                          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > max_bytes) shown.insert(shown.size() - 1, "...");
  return shown;
}

}  // namespace genrepro
