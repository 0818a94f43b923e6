// Renders a ReportContent as one self-contained HTML page: styles in the head, SVG figures
// inline, no scripts, nothing fetched.
#include <sstream>

#include "report/report_document.hpp"
#include "report/report_text.hpp"

namespace genrepro {

namespace {

constexpr const char* kStyle =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:60rem;margin:2rem auto;"
    "padding:0 1rem;color:#1a1a1a;line-height:1.45}"
    "h1,h2,h3{line-height:1.2}h2{margin-top:2.5rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}"
    "table{border-collapse:collapse;margin:.8rem 0;font-size:.92rem}"
    "th,td{border:1px solid #ccc;padding:.25rem .55rem;text-align:left;vertical-align:top}"
    "th{background:#f3f3f3}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}"
    "pre.gen{white-space:pre-wrap;word-break:break-word;background:#f7f7f4;border-left:3px solid #b8b8a8;"
    "padding:.6rem .8rem;font-size:.9rem}"
    "p.note{color:#6a5500;background:#fff8dc;padding:.4rem .7rem;border-left:3px solid #e0c050}"
    // A banner is a notice (the fixture), not an alarm: failures have their own red line.
    "p.banner{color:#1f3a5f;background:#eef4fb;padding:.6rem .9rem;border-left:4px solid #5b8fd1}"
    "p.pass,p.fail{font-size:1.45rem;font-weight:700;padding:.55rem .9rem;margin:1rem 0}"
    "p.pass{color:#0b5d27;background:#e3f4e8;border-left:8px solid #1e8e3e}"
    "p.fail{color:#8a0016;background:#ffe6e9;border-left:8px solid #c8102e}"
    // Run ids stay on one line; checksums and paths may break anywhere rather than
    // widen the page (a 64-digit sha256 made it 1292 px wide in a 1280 px window).
    "td.id{white-space:nowrap}"
    "td.hash{font-family:ui-monospace,monospace;font-size:.78rem;overflow-wrap:anywhere;word-break:break-all}"
    "details{margin:.8rem 0}summary{cursor:pointer;font-weight:600}"
    "figure.half{display:inline-block;width:49%;margin:.4rem 0;vertical-align:top}"
    "figure.half figcaption{font-size:.8rem}"
    "figure{margin:1rem 0}figure svg{max-width:100%;height:auto}figcaption{font-size:.9rem;color:#444}"
    "td.diff{background:#ffe1c4;font-weight:600}nav.toc{background:#f6f8fa;border:1px solid #ddd;padding:.4rem 1rem;"
    "font-size:.92rem}nav.toc ul{margin:.2rem 0;padding-left:1.2rem}";

std::string cell_text(const std::string& raw) { return html_escape(visible_text(raw, false)); }

void write_html_table(std::ostringstream& out, const ReportTable& t) {
  const auto cls = [&](size_t c, bool marked) {
    std::string classes = (c < t.numeric.size() && t.numeric[c]) ? "num" : "";
    const auto add = [&](const char* name) { classes += (classes.empty() ? "" : " ") + std::string(name); };
    if (marked) add("diff");
    if (c < t.header.size() && t.header[c] == kRunIdColumn) add("id");
    if (c < t.header.size() && (t.header[c] == kHashColumn || t.header[c] == kPathColumn)) add("hash");
    return classes.empty() ? std::string() : " class=\"" + classes + "\"";
  };
  out << "<table>\n<thead><tr>";
  for (size_t c = 0; c < t.header.size(); ++c) out << "<th" << cls(c, false) << ">" << cell_text(t.header[c]) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (size_t r = 0; r < t.rows.size(); ++r) {
    out << "<tr>";
    for (size_t c = 0; c < t.header.size(); ++c) {
      const std::string text = c < t.rows[r].size() ? cell_text(t.rows[r][c]) : std::string();
      const std::string link = cell_of(t.links, r, c);
      out << "<td" << cls(c, cell_of(t.marked, r, c)) << ">"
          << (link.empty() ? text : "<a href=\"#" + html_escape(link) + "\">" + text + "</a>") << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

// Level-2 headings, each with its level-3 headings nested under it.
void write_html_contents(std::ostringstream& out, const ReportContent& report) {
  out << "<nav class=\"toc\">\n<strong>Contents</strong>\n<ul>\n";
  bool open_sub = false, open_item = false;
  for (const auto& b : report.blocks) {
    if (b.kind != ReportBlock::Kind::heading || b.level < 2 || b.level > 3) continue;
    const std::string item = "<a href=\"#" + html_escape(b.anchor) + "\">" + cell_text(b.text) + "</a>";
    if (b.level == 2) {
      if (open_sub) out << "</ul>";
      if (open_item) out << "</li>\n";
      out << "<li>" << item;
      open_item = true;
      open_sub = false;
    } else {
      if (!open_sub) out << "\n<ul>\n";
      out << "<li>" << item << "</li>\n";
      open_sub = true;
    }
  }
  if (open_sub) out << "</ul>";
  if (open_item) out << "</li>\n";
  out << "</ul>\n</nav>\n";
}

}  // namespace

std::string render_html(const ReportContent& report) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << cell_text(report.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n"
      << "<h1>" << cell_text(report.title) << "</h1>\n";
  for (const auto& b : report.blocks) {
    switch (b.kind) {
      case ReportBlock::Kind::heading: {
        const int level = b.level < 1 ? 1 : (b.level > 6 ? 6 : b.level);
        out << "<h" << level << (b.anchor.empty() ? std::string() : " id=\"" + html_escape(b.anchor) + "\"") << ">"
            << cell_text(b.text) << "</h" << level << ">\n";
        break;
      }
      case ReportBlock::Kind::paragraph:
        out << "<p>" << cell_text(b.text) << "</p>\n";
        break;
      case ReportBlock::Kind::note:
        out << "<p class=\"note\">" << cell_text(b.text) << "</p>\n";
        break;
      case ReportBlock::Kind::banner:
        out << "<p class=\"banner\">" << cell_text(b.text) << "</p>\n";
        break;
      case ReportBlock::Kind::verdict_pass:
        out << "<p class=\"pass\">" << cell_text(b.text) << "</p>\n";
        break;
      case ReportBlock::Kind::verdict_fail:
        out << "<p class=\"fail\">" << cell_text(b.text) << "</p>\n";
        break;
      case ReportBlock::Kind::fold_begin:
        out << "<details>\n<summary>" << cell_text(b.text) << "</summary>\n";
        break;
      case ReportBlock::Kind::fold_end:
        out << "</details>\n";
        break;
      case ReportBlock::Kind::table:
        write_html_table(out, b.table);
        break;
      case ReportBlock::Kind::generated_text:
        // HTML drops one newline right after <pre>; give it one so the text's own first line stays.
        out << "<pre class=\"gen\">\n" << html_escape(visible_text(b.text, true)) << "</pre>\n";
        break;
      case ReportBlock::Kind::figure:
        // The SVG is our own output (report_svg.cpp escapes every label), so it is inlined as is.
        out << (b.figure.half ? "<figure class=\"half\">\n" : "<figure>\n") << b.figure.svg << "<figcaption>" << cell_text(b.figure.caption)
            << "</figcaption>\n</figure>\n";
        break;
      case ReportBlock::Kind::contents:
        write_html_contents(out, report);
        break;
    }
  }
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace genrepro
