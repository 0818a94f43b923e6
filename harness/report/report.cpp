#include "report/report.hpp"

#include <filesystem>

#include "compare/engine_parity.hpp"
#include "util/atomic_file.hpp"

namespace genrepro {

std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents, const ReportOptions& options) {
  return render_report(documents, options, summarize_grids(documents, options.bootstrap_seed));
}

std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents, const ReportOptions& options,
                                      const std::vector<GridSummary>& grids) {
  const ReportContent content = build_report_content(documents, options, grids);
  std::vector<ReportFile> files = {{"report.md", render_markdown(content)}, {"report.html", render_html(content)}};
  for (const ReportBlock& b : content.blocks) {
    if (b.kind == ReportBlock::Kind::figure) files.push_back({b.figure.file, b.figure.svg});
  }
  // The parity table's numbers, for a reader's own analysis (the first pair of documents that
  // ran on different engines; docs/engines.md).
  for (size_t d = 1; d < documents.size(); ++d) {
    const std::vector<RunParity> runs = engine_parity(documents[0].evidence, documents[d].evidence);
    if (runs.empty()) continue;
    files.push_back({"parity.csv", parity_csv(runs)});
    break;
  }
  if (!grids.empty()) {
    files.push_back({"grid-cells.csv", grid_cells_csv(grids)});
    files.push_back({"grid-kept-per-step.csv", grid_kept_csv(grids)});
  }
  return files;
}

std::vector<std::string> write_report(const std::vector<ReportFile>& files, const std::string& out_dir) {
  std::vector<std::string> written;
  for (const ReportFile& f : files) {
    const std::string path = (std::filesystem::path(out_dir) / f.name).string();
    write_file_atomically(path, f.content);
    written.push_back(path);
  }
  return written;
}

}  // namespace genrepro
