// genrepro report EVIDENCE... [--out DIR] [--golden DIR] [--label NAME]... [--article FACTS] [--json]:
// the article's tables and charts rebuilt from evidence, opened (with --golden) by the verdict
// against the golden, with the evidence files side by side when they share runs, (with
// --article) the article's published numbers beside the evidence's, and a summary per
// experiment grid (also as CSV files, and on stdout with --json).
#include <string>
#include <vector>

#include "cli/output_paths.hpp"
#include "cli/verbs.hpp"
#include "evidence/evidence_consistency.hpp"
#include "compare/fragility.hpp"
#include "golden/article_check.hpp"
#include "report/report.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro::cli {

namespace {

struct ReportCliOptions {
  std::vector<std::string> evidence;
  std::string out = "reports/out";
  std::string golden;
  std::vector<std::string> labels;
  std::string article;
  std::string sensitivity;  // with --golden: label each token divergence (diff --sensitivity's rules)
  bool json = false;
};

std::vector<ReportDocument> read_documents(const ReportCliOptions& opt) {
  if (!opt.labels.empty() && opt.labels.size() != opt.evidence.size())
    throw UsageError("--label: given " + std::to_string(opt.labels.size()) + " time(s) for " + std::to_string(opt.evidence.size()) +
                     " evidence file(s); give one --label per evidence file, in the same order, or none");
  std::vector<ReportDocument> documents;
  for (std::size_t i = 0; i < opt.evidence.size(); ++i) {
    documents.push_back(read_report_evidence(opt.evidence[i]));
    if (!opt.labels.empty()) documents.back().label = opt.labels[i];
  }
  return documents;
}

int run_report(const ReportCliOptions& opt, Console& io) {
  check_output_directory("--out", opt.out);
  const std::vector<ReportDocument> documents = read_documents(opt);
  ReportOptions options;
  if (!opt.golden.empty()) {
    options.golden = read_golden(opt.golden);
    options.golden_name = opt.golden;
  }
  if (!opt.sensitivity.empty()) {
    if (opt.golden.empty())
      throw UsageError("--sensitivity labels the verdict against the golden; give --golden DIR|FILE too");
    options.sensitivity = read_fragility(opt.sensitivity);
  }
  if (!opt.article.empty()) {
    options.article_facts = load_article_facts(opt.article);
    options.article_name = opt.article;
  }
  // After every input was read: a refused input is then the one line on stderr.
  for (std::size_t i = 0; i < documents.size(); ++i) print_unchecked_texts(opt.evidence[i], documents[i].evidence, io.err);
  print_unchecked_texts(options.golden, io.err);
  const std::vector<GridSummary> grids = summarize_grids(documents, options.bootstrap_seed);
  const std::vector<std::string> written = write_report(render_report(documents, options, grids), opt.out);
  if (!opt.json) {
    for (const std::string& path : written) io.out << path << "\n";
    return 0;
  }
  // --json: the files written and every grid summary's numbers (the CSV files' numbers, the same
  // computation), one JSON document on stdout.
  OrderedJson j = {{"files", written}, {"bootstrap_seed", options.bootstrap_seed}, {"grids", grid_summaries_json(grids)}};
  io.out << j.dump(2) << "\n";
  return 0;
}

}  // namespace

void setup_report(CLI::App& app, VerbContext& ctx) {
  auto opt = std::make_shared<ReportCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "report",
      "Rebuild the article's tables and charts from evidence: report.md, report.html (self-contained, charts "
      "inline) and the charts as SVG files. With --golden it opens with the verdict against the golden; two "
      "evidence files that share runs are compared side by side (A/B).");
  sub->add_option("evidence", opt->evidence, "evidence.json files written by 'genrepro run'")->required();
  sub->add_option("--out", opt->out, "report directory (created if missing)")->capture_default_str();
  sub->add_option("--golden", opt->golden, "golden evidence (a file or a directory such as golden/fixture): open with the verdict");
  sub->add_option("--sensitivity", opt->sensitivity,
                  "with --golden: a sensitivity.json (genrepro sensitivity) that labels each run whose tokens diverged\n"
                  "known-fragile or unexpected in the verdict, by diff --sensitivity's rules (docs/sensitivity.md)")
      ->type_name("PATH");
  sub->add_option("--label", opt->labels, "what to call each evidence file, in order (repeatable), e.g. --label before --label after")
      ->allow_extra_args(false);
  sub->add_option("--article", opt->article,
                  "the article's facts (golden/article/article-facts.json): its numbers beside the evidence's");
  sub->add_flag("--json", opt->json,
                 "print the files written and the grid summaries' numbers (the CSV files' figures) as one JSON document");
  on_verb(*sub, ctx, [opt, &ctx] { ctx.exit_code = run_report(*opt, ctx.io); });
}

}  // namespace genrepro::cli
