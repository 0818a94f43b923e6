#pragma once
// The report stage: evidence documents in, a self-contained report directory out (report.md,
// report.html with the charts inline, and the charts as SVG files). The article's tables and
// pictures are rebuilt from runs recognized by their parameters (mode, temperature, top_p,
// seed, max_new_tokens, sampler_order), never by id strings, so any experiment with such runs
// fills them; a section with no matching runs says so instead of failing. The same evidence
// always gives byte-identical files (the only time shown is the evidence's created_utc).
#include <optional>
#include <string>
#include <vector>

#include "compare/fragility.hpp"
#include "evidence/evidence.hpp"
#include "report/grid_summary.hpp"
#include "report/report_document.hpp"
#include "report/report_evidence.hpp"

namespace genrepro {

struct ReportFile {
  std::string name;     // file name inside the report directory
  std::string content;
};

// What a report compares the evidence with, besides itself.
struct ReportOptions {
  // --golden: the report opens with the verdict of each document against these (diff's rules
  // and default tolerance, docs/diff.md), each differing run linked to its section.
  std::vector<EvidenceFile> golden;
  std::string golden_name;  // as given, for the text
  // --article: golden/article/article-facts.json as load_article_facts read it; the article's
  // numbers then stand beside the evidence's (nucleus sizes) and a section checks every fact.
  std::optional<OrderedJson> article_facts;
  std::string article_name;
  // The seed of the grid summaries' bootstrap (grid_summary.hpp), recorded beside every interval.
  uint64_t bootstrap_seed = kDefaultBootstrapSeed;
  // --sensitivity (with --golden): the verdict labels each token divergence known-fragile or
  // unexpected, as diff --sensitivity does (compare/fragility.hpp).
  std::optional<FragilityKnowledge> sensitivity;
};

// The report's sections as blocks (report_sections.cpp), headings with their anchors.
// Documents are read in the order given; with two or more that share run ids, an A/B section
// compares them side by side.
ReportContent build_report_content(const std::vector<ReportDocument>& documents, const ReportOptions& options = {});
// The same with the grid summaries already made (summarize_grids with options.bootstrap_seed), so
// the page, the CSV files and report --json show one computation.
ReportContent build_report_content(const std::vector<ReportDocument>& documents, const ReportOptions& options,
                                   const std::vector<GridSummary>& grids);

// Every file of the report directory, in a fixed order: report.md, report.html, the SVGs, then,
// when the evidence holds a grid, grid-cells.csv and grid-kept-per-step.csv (the summaries' numbers).
std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents, const ReportOptions& options = {});
std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents, const ReportOptions& options,
                                      const std::vector<GridSummary>& grids);

// Writes the files into out_dir (created if missing), each atomically (harness/util/atomic_file.hpp:
// a temporary file in the same directory, fsync, rename), so a reader never sees half a file.
// Returns the paths written. Throws genrepro::Error naming the file that cannot be written.
std::vector<std::string> write_report(const std::vector<ReportFile>& files, const std::string& out_dir);

}  // namespace genrepro
