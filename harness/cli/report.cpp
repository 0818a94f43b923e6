// genrepro report EVIDENCE... [--out DIR]: the article's tables and charts, rebuilt from evidence.
#include <string>
#include <vector>

#include "cli/verbs.hpp"
#include "report/report.hpp"

namespace genrepro::cli {

namespace {

struct ReportOptions {
  std::vector<std::string> evidence;
  std::string out = "reports/out";
};

int run_report(const ReportOptions& opt, Console& io) {
  std::vector<ReportDocument> documents;
  for (const std::string& path : opt.evidence) documents.push_back(read_report_evidence(path));
  for (const std::string& path : write_report(render_report(documents), opt.out)) io.out << path << "\n";
  return 0;
}

}  // namespace

void setup_report(CLI::App& app, VerbContext& ctx) {
  auto opt = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Rebuild the article's tables and charts from evidence: report.md, report.html (self-contained, charts "
      "inline) and the charts as SVG files.");
  sub->add_option("evidence", opt->evidence, "evidence.json files written by 'genrepro run'")->required();
  sub->add_option("--out", opt->out, "report directory (created if missing)")->capture_default_str();
  on_verb(*sub, ctx, [opt, &ctx] { ctx.exit_code = run_report(*opt, ctx.io); });
}

}  // namespace genrepro::cli
