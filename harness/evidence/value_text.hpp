#pragma once
// How values and steps are named for people: diff's reasons and text, the checkpoint's key
// mismatches, the article check, bless and the report all show them the same way.
#include <cstdint>
#include <string>

#include "util/json_text.hpp"

namespace genrepro {

// How numbers and values appear in reasons and text: a difference or tolerance with two
// significant digits ("4e-05"), a value as compact JSON ("(absent)" for a missing one).
std::string show_delta(double d);
// How every verb and the report name a step for people: "new token 3 (steps[2])",
// counting new tokens from 1 beside the 0-based index of the JSON field.
std::string new_token_label(int64_t step_index);
std::string show_json(const OrderedJson& j);
// show_json cut to one short line: "\"5801a7...\"...(66 chars)".
std::string show_value(const OrderedJson& j);

}  // namespace genrepro
