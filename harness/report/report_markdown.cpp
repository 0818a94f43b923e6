// Renders a ReportContent as Markdown (GitHub-flavoured tables; figures link the SVG files that
// sit next to report.md).
#include <sstream>

#include "report/report_document.hpp"
#include "report/report_text.hpp"

namespace genrepro {

namespace {

std::string inline_text(const std::string& raw) { return markdown_inline(visible_text(raw, false)); }

void write_markdown_table(std::ostringstream& out, const ReportTable& t) {
  const auto row = [&](const std::vector<std::string>& cells, size_t r, bool body) {
    out << "|";
    for (size_t c = 0; c < t.header.size(); ++c) {
      std::string text = c < cells.size() ? inline_text(cells[c]) : std::string();
      if (body && !text.empty() && cell_of(t.marked, r, c)) text = "**" + text + "**";
      const std::string link = body ? cell_of(t.links, r, c) : std::string();
      if (!link.empty() && !text.empty()) text = "[" + text + "](#" + link + ")";
      out << " " << text << " |";
    }
    out << "\n";
  };
  row(t.header, 0, false);
  out << "|";
  for (size_t c = 0; c < t.header.size(); ++c) {
    out << ((c < t.numeric.size() && t.numeric[c]) ? " ---: |" : " --- |");
  }
  out << "\n";
  for (size_t r = 0; r < t.rows.size(); ++r) row(t.rows[r], r, true);
}

void write_markdown_contents(std::ostringstream& out, const ReportContent& report) {
  out << "**Contents**\n\n";
  for (const auto& b : report.blocks) {
    if (b.kind != ReportBlock::Kind::heading || b.level < 2 || b.level > 3) continue;
    out << (b.level == 3 ? "  - " : "- ") << "[" << inline_text(b.text) << "](#" << b.anchor << ")\n";
  }
}

void write_generated_text(std::ostringstream& out, const std::string& raw) {
  std::string text = visible_text(raw, true);
  if (text.empty() || text.back() != '\n') text += '\n';
  const std::string fence = markdown_fence(text);
  out << fence << "text\n" << text << fence << "\n";
}

}  // namespace

std::string render_markdown(const ReportContent& report) {
  std::ostringstream out;
  out << "# " << inline_text(report.title) << "\n";
  for (const auto& b : report.blocks) {
    out << "\n";
    switch (b.kind) {
      case ReportBlock::Kind::heading:
        out << std::string(static_cast<size_t>(b.level < 1 ? 1 : b.level), '#') << " " << inline_text(b.text) << "\n";
        break;
      case ReportBlock::Kind::paragraph:
        out << inline_text(b.text) << "\n";
        break;
      case ReportBlock::Kind::note:
        out << "> " << inline_text(b.text) << "\n";
        break;
      case ReportBlock::Kind::banner:  // a notice (the fixture), not an alarm: failures are verdict_fail
        out << "> **Notice:** " << inline_text(b.text) << "\n";
        break;
      case ReportBlock::Kind::verdict_pass:
        out << "**✅ " << inline_text(b.text) << "**\n";  // not a heading: it would shift GitHub's anchors
        break;
      case ReportBlock::Kind::verdict_fail:
        out << "**❌ " << inline_text(b.text) << "**\n";
        break;
      // GitHub renders <details> in Markdown; the blank line after <summary> lets Markdown resume.
      case ReportBlock::Kind::fold_begin:
        out << "<details>\n<summary>" << html_escape(visible_text(b.text, false)) << "</summary>\n";
        break;
      case ReportBlock::Kind::fold_end:
        out << "</details>\n";
        break;
      case ReportBlock::Kind::table:
        write_markdown_table(out, b.table);
        break;
      case ReportBlock::Kind::generated_text:
        write_generated_text(out, b.text);
        break;
      case ReportBlock::Kind::figure:
        out << "![" << inline_text(b.figure.caption) << "](" << b.figure.file << ")\n\n"
            << "*" << inline_text(b.figure.caption) << "*\n";
        break;
      case ReportBlock::Kind::contents:
        write_markdown_contents(out, report);
        break;
    }
  }
  return out.str();
}

}  // namespace genrepro
