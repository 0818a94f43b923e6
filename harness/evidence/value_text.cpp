// How values and steps are named for people, in every verb's messages (docs/diff.md, "Text output").
#include "evidence/value_text.hpp"

#include <cstdio>

namespace genrepro {

namespace {

// Long values (torch_config, loaded libraries) are summarized in text; --json keeps them whole.
constexpr std::size_t kMaxShownChars = 60;

}  // namespace

std::string new_token_label(int64_t step_index) {
  return "new token " + std::to_string(step_index + 1) + " (steps[" + std::to_string(step_index) + "])";
}

std::string show_delta(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", d);
  return buf;
}

std::string show_json(const OrderedJson& j) {
  return j.is_null() ? "(absent)" : j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
}

std::string show_value(const OrderedJson& j) {
  std::string s = show_json(j);
  if (s.size() > kMaxShownChars) s = s.substr(0, kMaxShownChars) + "...(" + std::to_string(s.size()) + " chars)";
  return s;
}

}  // namespace genrepro
