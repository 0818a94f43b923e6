// The report's sections in the article's order; each section lives in its own file
// (report_section_kit.hpp lists them), picks its runs by their parameters, builds its tables and
// charts, and adds a note instead when the evidence holds no run it could use.
#include "report/report.hpp"
#include "report/report_compare.hpp"
#include "report/report_section_kit.hpp"
#include "report/report_sections_stages.hpp"

namespace genrepro {

ReportContent build_report_content(const std::vector<ReportDocument>& documents, const ReportOptions& options) {
  return build_report_content(documents, options, summarize_grids(documents, options.bootstrap_seed));
}

ReportContent build_report_content(const std::vector<ReportDocument>& documents, const ReportOptions& options,
                                   const std::vector<GridSummary>& grids) {
  ReportContent report;
  report.title = "genrepro report: the loop, sampling, and stopping";
  sections::Inputs in{documents, options, grids, {}, {}, {}};
  for (const GridSummary& g : grids)
    for (const GridCell& c : g.cells) in.grid_runs.insert(c.runs.begin(), c.runs.end());
  for (size_t d = 0; d < documents.size(); ++d) {
    for (const auto& r : documents[d].evidence.runs) {
      in.runs.push_back(&r);
      in.document_of.emplace(&r, d);
    }
  }
  sections::Builder b(report);
  // The reviewer's question first: is it noise (the fixture), and did it reproduce (the verdict)?
  sections::add_fixture_banner(in, b);
  add_verdict_section(documents, options, report.blocks);
  sections::add_intro(in, b);
  b.contents();
  add_ab_section(documents, report.blocks);
  sections::add_engine_parity(in, b);
  add_article_section(documents, options, report.blocks);
  // A grid's summaries come before the article's run-by-run sections: for many seeds they are
  // what a reader wants first, and every later section folds the grid's runs away.
  sections::add_grid_summaries(in, b);
  sections::add_greedy(in, b);
  sections::add_first_prediction(in, b);
  sections::add_temperature(in, b);
  sections::add_nucleus(in, b);
  sections::add_sampler_order(in, b);
  sections::add_stage_kept(in, b);
  sections::add_seeds(in, b);
  sections::add_stopping(in, b);
  sections::add_step_charts(in, b);
  sections::add_all_runs(in, b);
  sections::add_sources(in, b);
  assign_anchors(report);
  return report;
}

}  // namespace genrepro
