#pragma once
// A report as plain blocks (headings, paragraphs, tables, generated texts, figures) built once
// from the evidence and rendered twice, as Markdown and as one self-contained HTML page, so the
// two always say the same thing. Blocks hold raw text; each renderer makes it visible
// (report_text.hpp) and escapes it for its own output, so nothing in the evidence can become markup.
#include <string>
#include <vector>

namespace genrepro {

struct ReportTable {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned numbers
  std::vector<std::vector<std::string>> rows;
};

struct ReportFigure {
  std::string file;     // the SVG's file name in the report directory, e.g. "nucleus-sizes.svg"
  std::string caption;
  std::string svg;      // the whole SVG document; the HTML page inlines it
};

struct ReportBlock {
  enum class Kind { heading, paragraph, note, banner, table, generated_text, figure };
  Kind kind = Kind::paragraph;
  int level = 2;        // heading level (1 = the title)
  std::string text;     // heading, paragraph, note, banner or generated text (shown as written, visibly)
  ReportTable table;
  ReportFigure figure;
};

struct ReportContent {
  std::string title;
  std::vector<ReportBlock> blocks;  // the title is not among them
};

std::string render_markdown(const ReportContent& report);
std::string render_html(const ReportContent& report);

}  // namespace genrepro
