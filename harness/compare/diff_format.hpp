#pragma once
// How a diff is shown (docs/diff.md, "Text output" and "--json"): the readable report and the
// genrepro.diff/1 document. Comparing and classifying are evidence_diff.hpp's.
#include <string>

#include "compare/evidence_diff.hpp"
#include "evidence/value_text.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// One block per differing run, missing/extra runs, environment and provenance differences,
// then the summary line ("diff: 12 runs compared, 11 agree, 1 differ (1 regression), ...").
std::string format_diff_text(const EvidenceDiff& diff);
std::string diff_summary_line(const EvidenceDiff& diff);

// The --json document ("schema": "genrepro.diff/1"), shape in docs/diff.md.
OrderedJson diff_to_json(const EvidenceDiff& diff);

}  // namespace genrepro
