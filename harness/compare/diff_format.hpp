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
// Runs paired across a parameter change (EvidenceDiff::pairs) are grouped by their change, three
// lines a pair; more than ten differing runs are grouped by verdict and cause.
std::string diff_summary_line(const EvidenceDiff& diff);
// --brief: one line per run that parted (differing, paired, missing, extra), one line counting
// the environment's differences, and the summary line.
std::string format_diff_brief(const EvidenceDiff& diff);

// The --json document ("schema": "genrepro.diff/1"), shape in docs/diff.md.
OrderedJson diff_to_json(const EvidenceDiff& diff);

}  // namespace genrepro
