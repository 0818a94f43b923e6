#include "report/report.hpp"

#include <filesystem>

#include "util/atomic_file.hpp"

namespace genrepro {

std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents, const ReportOptions& options) {
  const ReportContent content = build_report_content(documents, options);
  std::vector<ReportFile> files = {{"report.md", render_markdown(content)}, {"report.html", render_html(content)}};
  for (const ReportBlock& b : content.blocks) {
    if (b.kind == ReportBlock::Kind::figure) files.push_back({b.figure.file, b.figure.svg});
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
