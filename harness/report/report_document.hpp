#pragma once
// A report as plain blocks (headings, paragraphs, tables, generated texts, figures) built once
// from the evidence and rendered twice, as Markdown and as one self-contained HTML page, so the
// two always say the same thing. Blocks hold raw text; each renderer makes it visible
// (report_text.hpp) and escapes it for its own output, so nothing in the evidence can become markup.
#include <string>
#include <vector>

namespace genrepro {

// Columns the HTML page styles by their header: run ids stay on one line, checksums may break
// and paths may break anywhere (in a small monospace font) rather than widen the page.
inline constexpr const char* kRunIdColumn = "run";
inline constexpr const char* kHashColumn = "sha256";
inline constexpr const char* kPathColumn = "file";

struct ReportTable {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned numbers
  std::vector<std::vector<std::string>> rows;
  // Optional, per row and column: the text of the heading the cell links to (resolved to that
  // heading's anchor by assign_anchors; a cell whose heading does not exist is not a link).
  std::vector<std::vector<std::string>> links;
  std::vector<std::vector<bool>> marked;  // optional, per row and column: highlighted (a difference)
};

// An optional per-cell grid's value (links, marked), or the default where the grid is shorter.
template <class T>
T cell_of(const std::vector<std::vector<T>>& grid, size_t row, size_t column) {
  return row < grid.size() && column < grid[row].size() ? grid[row][column] : T{};
}

struct ReportFigure {
  std::string file;     // the SVG's file name in the report directory, e.g. "nucleus-sizes.svg"
  std::string caption;
  std::string svg;      // the whole SVG document; the HTML page inlines it
  bool half = false;    // HTML: half the page's width, so two such figures stand side by side
};

struct ReportBlock {
  // contents: the table of contents, every level-2 and level-3 heading as a link to its anchor.
  // fold_begin/fold_end: the blocks between them are folded away (HTML <details>, whose summary
  // line is fold_begin's text; GitHub renders the same tags in Markdown). Folds do not nest.
  // verdict_pass / verdict_fail: the verdict as one large line, green or red.
  enum class Kind { heading, paragraph, note, banner, table, generated_text, figure, contents, fold_begin, fold_end, verdict_pass, verdict_fail };
  Kind kind = Kind::paragraph;
  int level = 2;        // heading level (1 = the title)
  std::string anchor;   // headings: the id links use (assign_anchors), as GitHub derives it from the text
  std::string text;     // heading, paragraph, note, banner or generated text (shown as written, visibly)
  ReportTable table;
  ReportFigure figure;
};

struct ReportContent {
  std::string title;
  std::vector<ReportBlock> blocks;  // the title is not among them
};

// Gives every heading its anchor, GitHub's way (lower case; letters, digits, '-' and '_' kept;
// spaces become '-'; other punctuation dropped; a repeated one gets "-1", "-2", ...), so the same
// links work in report.md on GitHub and in report.html, and resolves table links to them.
void assign_anchors(ReportContent& report);

std::string render_markdown(const ReportContent& report);
std::string render_html(const ReportContent& report);

}  // namespace genrepro
