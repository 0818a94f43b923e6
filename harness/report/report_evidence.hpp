#pragma once
// The report's input: evidence documents as harness/evidence/evidence.hpp reads them, each with the name the
// report shows (the file name without its directory, so the same evidence gives the same report
// wherever it lies).
#include <string>

#include "evidence/evidence.hpp"

namespace genrepro {

struct ReportDocument {
  std::string name;
  Evidence evidence;
  std::string label;  // --label: what the report calls it (A/B tables, legends); empty: the name
  const std::string& shown() const { return label.empty() ? name : label; }
};

// read_evidence(path) (which names the file and the first bad field in an EvidenceError) plus
// the file name.
ReportDocument read_report_evidence(const std::string& path);

}  // namespace genrepro
