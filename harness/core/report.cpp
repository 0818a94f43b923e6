#include "core/report.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/errors.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;

// Writes `content` to `path` through a temporary file next to it and a rename (atomic on POSIX
// within one file system), so a reader sees the old file or the new one, never half of one.
void write_atomically(const fs::path& path, const std::string& content) {
  const fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp-" + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw UsageError("cannot write report file '" + tmp.string() + "': " + std::strerror(errno) +
                       "; pass a writable directory with --out");
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw UsageError("cannot write report file '" + tmp.string() + "' (disk full?); pass a writable directory with --out");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw UsageError("cannot replace report file '" + path.string() + "': " + why + "; pass a writable directory with --out");
  }
}

}  // namespace

std::vector<ReportFile> render_report(const std::vector<ReportDocument>& documents) {
  const ReportContent content = build_report_content(documents);
  std::vector<ReportFile> files = {{"report.md", render_markdown(content)}, {"report.html", render_html(content)}};
  for (const ReportBlock& b : content.blocks) {
    if (b.kind == ReportBlock::Kind::figure) files.push_back({b.figure.file, b.figure.svg});
  }
  return files;
}

std::vector<std::string> write_report(const std::vector<ReportFile>& files, const std::string& out_dir) {
  const fs::path dir(out_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw UsageError("cannot create report directory '" + out_dir + "': " +
                     (ec ? ec.message() : std::string("a file of that name exists")) + "; pass a writable directory with --out");
  }
  std::vector<std::string> written;
  for (const ReportFile& f : files) {
    const fs::path path = dir / f.name;
    write_atomically(path, f.content);
    written.push_back(path.string());
  }
  return written;
}

}  // namespace genrepro
