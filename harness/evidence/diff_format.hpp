#pragma once
// How a diff is shown (docs/diff.md, "Text output" and "--json"): the readable report and the
// genrepro.diff/1 document. Comparing and classifying are evidence_diff.hpp's.
#include <cstdint>
#include <string>

#include "evidence/evidence_diff.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// One block per differing run, missing/extra runs, environment and provenance differences,
// then the summary line ("diff: 12 runs compared, 11 agree, 1 differ (1 regression), ...").
std::string format_diff_text(const EvidenceDiff& diff);
std::string diff_summary_line(const EvidenceDiff& diff);

// The --json document ("schema": "genrepro.diff/1"), shape in docs/diff.md.
OrderedJson diff_to_json(const EvidenceDiff& diff);

// How numbers and values appear in reasons and text: a difference or tolerance with two
// significant digits ("4e-05"), a value as compact JSON ("(absent)" for a missing one).
std::string show_delta(double d);
// How every verb and the report name a step for people (issue 13): "new token 3 (steps[2])",
// counting new tokens from 1 beside the 0-based index of the JSON field.
std::string new_token_label(int64_t step_index);
std::string show_json(const OrderedJson& j);
// show_json cut to one short line: "\"5801a7...\"...(66 chars)".
std::string show_value(const OrderedJson& j);

}  // namespace genrepro
