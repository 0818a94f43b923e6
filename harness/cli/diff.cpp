// genrepro diff GOLDEN EVIDENCE: do the new runs agree with the golden ones, and if not, why?
#include <memory>
#include <string>

#include "cli/verbs.hpp"
#include "evidence/diff_format.hpp"
#include "evidence/evidence.hpp"
#include "evidence/evidence_diff.hpp"

namespace genrepro::cli {

namespace {

struct DiffOptions {
  std::string golden;    // an evidence file or a directory of them
  std::string evidence;  // the new evidence
  bool json = false;
  double prob_tolerance = kDefaultProbTolerance;
};

int run_diff(const DiffOptions& a, Console& io) {
  const std::vector<EvidenceFile> golden = read_golden(a.golden);
  const EvidenceFile current = read_evidence_file(a.evidence);
  const EvidenceDiff d = diff_evidence(golden, current, EvidenceDiffOptions{a.prob_tolerance});
  if (a.json)
    io.out << diff_to_json(d).dump(2, ' ', false, OrderedJson::error_handler_t::replace) << "\n";
  else
    io.out << format_diff_text(d);
  return d.agree() ? kExitOk : kExitDiffer;
}

}  // namespace

void setup_diff(CLI::App& app, VerbContext& ctx) {
  auto a = std::make_shared<DiffOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "Compare new evidence with golden evidence, run by run (matched by id). Token ids, text, stop\n"
      "and kept sizes must be equal; probabilities agree within --prob-tolerance. Each differing run\n"
      "is explained: first divergent step, both tokens with their probabilities in both runs, the\n"
      "margin there, and a verdict (regression, kept-set change, sampler/RNG change, parameter\n"
      "change, near-tie; docs/diff.md). Environment differences are listed as likely causes.\n"
      "Exit: 0 agree, 1 differ (or runs missing/extra), 2 bad input.");
  cmd->add_option("GOLDEN", a->golden, "Golden evidence file, or a directory of them (e.g. golden/fixture)")->required();
  cmd->add_option("EVIDENCE", a->evidence, "New evidence file (written by genrepro run)")->required();
  cmd->add_flag("--json", a->json, "Print the machine-readable report (schema genrepro.diff/1, docs/diff.md)");
  cmd->add_option("--prob-tolerance", a->prob_tolerance,
                  "Absolute tolerance for every compared probability (docs/diff.md says why the default)")
      ->capture_default_str();
  cmd->callback([a, &ctx] { ctx.exit_code = run_diff(*a, ctx.io); });
}

}  // namespace genrepro::cli
