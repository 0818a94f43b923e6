#pragma once
// The report stage: evidence documents in, a self-contained report directory out (report.md,
// report.html with the charts inline, and the charts as SVG files). The article's tables and
// pictures are rebuilt from runs recognized by their parameters (mode, temperature, top_p,
// seed, max_new_tokens, sampler_order), never by id strings, so any experiment with such runs
// fills them; a section with no matching runs says so instead of failing. The same evidence
// always gives byte-identical files (the only time shown is the evidence's created_utc).
#include <string>
#include <vector>

#include "report/report_document.hpp"
#include "report/report_evidence.hpp"

namespace genrepro {

struct ReportFile {
  std::string name;     // file name inside the report directory
  std::string content;
};

// The report's sections as blocks (report_sections.cpp). Documents are read in the order given.
ReportContent build_report_content(const std::vector<ReportDocument>& documents);

// Every file of the report directory, in a fixed order: report.md, report.html, then the SVGs.
std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents);

// Writes the files into out_dir (created if missing), each atomically (harness/util/atomic_file.hpp:
// a temporary file in the same directory, fsync, rename), so a reader never sees half a file.
// Returns the paths written. Throws genrepro::Error naming the file that cannot be written.
std::vector<std::string> write_report(const std::vector<ReportFile>& files, const std::string& out_dir);

}  // namespace genrepro
