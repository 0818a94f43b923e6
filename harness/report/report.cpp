#include "report/report.hpp"

#include <filesystem>

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
