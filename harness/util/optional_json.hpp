#pragma once
// An optional value as JSON: the value, or null (how evidence and reports write "not recorded").
#include <optional>

#include "util/json_text.hpp"

namespace genrepro {

template <class T>
OrderedJson optional_json(const std::optional<T>& v) {
  return v ? OrderedJson(*v) : OrderedJson(nullptr);
}

}  // namespace genrepro
