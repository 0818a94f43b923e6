// Anchors for headings, derived from their text the way GitHub does for Markdown, so one link
// ("#verdict-against-the-golden") works in report.md on GitHub and in report.html.
#include <map>

#include "report/report_document.hpp"
#include "report/report_text.hpp"

namespace genrepro {

namespace {

std::string slug(const std::string& text) {
  std::string out;
  for (char c : visible_text(text, false)) {
    const auto u = static_cast<unsigned char>(c);
    if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || u >= 0x80) out += c;
    else if (c == ' ') out += '-';
  }
  return out.empty() ? "section" : out;
}

}  // namespace

void assign_anchors(ReportContent& report) {
  std::map<std::string, int> used;
  std::map<std::string, std::string> by_text;  // the first heading with a text
  for (ReportBlock& b : report.blocks) {
    if (b.kind != ReportBlock::Kind::heading) continue;
    const std::string base = slug(b.text);
    const int n = used[base]++;
    b.anchor = n == 0 ? base : base + "-" + std::to_string(n);
    by_text.emplace(b.text, b.anchor);
  }
  for (ReportBlock& b : report.blocks)
    for (auto& row : b.table.links)
      for (std::string& target : row) {
        const auto it = by_text.find(target);
        target = target.empty() || it == by_text.end() ? std::string() : it->second;
      }
}

}  // namespace genrepro
