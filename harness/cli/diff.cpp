// genrepro diff GOLDEN EVIDENCE: do the new runs agree with the golden ones, and if not, why?
#include <memory>
#include <optional>
#include <string>

#include "cli/flag_kinds.hpp"
#include "cli/verbs.hpp"
#include "compare/diff_ci_report.hpp"
#include "compare/diff_format.hpp"
#include "evidence/evidence.hpp"
#include "compare/evidence_diff.hpp"
#include "compare/fragility.hpp"
#include "compare/run_pairing.hpp"
#include "evidence/evidence_consistency.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

struct DiffOptions {
  std::string golden;    // an evidence file or a directory of them
  std::string evidence;  // the new evidence
  bool json = false;
  bool brief = false;  // one line per run that parted, and the summary
  std::string pair_by = kDefaultPairBy;  // keys that pair runs across a parameter change; "none": by id only
  double prob_tolerance = kDefaultProbTolerance;
  std::string junit;        // write a JUnit XML report here (empty: none)
  std::string annotations;  // "github": print workflow-command annotations (empty: none)
  bool junit_given = false;  // --junit was on the command line (so an empty value is refused)
  std::string sensitivity;    // a sensitivity.json that labels divergences (empty: none)
  bool allow_fragile = false;  // exit 0 when every failure is a known-fragile divergence
};

void check_diff_options(const DiffOptions& a) {
  checked_tolerance("--prob-tolerance", a.prob_tolerance);
  if (!a.annotations.empty() && a.annotations != "github")
    throw UsageError("--annotations " + a.annotations + ": allowed: github (GitHub Actions ::error/::warning lines)");
  if (!a.annotations.empty() && a.json)
    throw UsageError("--annotations and --json both print on stdout; drop one (--junit FILE goes with either)");
  if (a.brief && a.json) throw UsageError("--brief and --json both choose what stdout holds; drop one");
  if (a.junit_given) check_output_file("--junit", a.junit, {a.golden, a.evidence});
  if (a.allow_fragile && a.sensitivity.empty())
    throw UsageError("--allow-fragile needs --sensitivity FILE: without a matrix no divergence is known to be fragile");
}

// "0 runs compared, 0 agree" would pass a gate that compared nothing (bless and replay refuse a
// file without runs too): each side must hold at least one run.
void refuse_empty_side(const std::string& golden_path, const std::vector<EvidenceFile>& golden, const EvidenceFile& current) {
  std::size_t golden_runs = 0;
  for (const EvidenceFile& f : golden) golden_runs += f.evidence.runs.size();
  if (golden_runs == 0)
    throw EvidenceError(golden_path +
                        ": holds no runs; there is nothing to compare against (give the golden that 'genrepro bless' wrote)");
  if (current.evidence.runs.empty())
    throw EvidenceError(current.path + ": holds no runs; there is nothing to compare (give evidence written by 'genrepro run')");
}

std::vector<std::string> pair_keys(const std::string& list) {
  if (list == "none") return {};
  return parse_pair_by(list, "--pair-by");
}

int run_diff(const DiffOptions& a, Console& io) {
  check_diff_options(a);
  const std::vector<std::string> keys = pair_keys(a.pair_by);  // checked before any file is read
  const std::vector<EvidenceFile> golden = read_golden(a.golden);
  const EvidenceFile current = read_evidence_file(a.evidence);
  refuse_empty_side(a.golden, golden, current);
  std::optional<FragilityKnowledge> matrix;
  if (!a.sensitivity.empty()) matrix = read_fragility(a.sensitivity);
  const EvidenceDiff d = diff_evidence(golden, current, EvidenceDiffOptions{a.prob_tolerance, keys});
  std::vector<RunFragility> labels;
  if (matrix) labels = label_divergences(d, golden, current, *matrix);
  print_unchecked_texts(golden, io.err);
  print_unchecked_texts(current.path, current.evidence, io.err);
  if (a.json) {
    OrderedJson doc = diff_to_json(d);
    if (matrix) doc["fragility"] = fragility_to_json(*matrix, labels);
    io.out << json_document_text(doc) << "\n";
  } else {
    io.out << (a.brief ? format_diff_brief(d) : format_diff_text(d));
    if (matrix) io.out << format_fragility_text(*matrix, labels);
  }
  const bool excused = !d.agree() && a.allow_fragile && only_known_fragile(d, labels);
  CiFragility ci{{}, excused};
  for (const RunFragility& f : labels) ci.label_of_run[f.id] = std::string(to_string(f.label)) + " (" + f.why + ")";
  if (a.annotations == "github") io.out << diff_to_github_annotations(d, ci);
  if (!a.junit.empty()) write_file_atomically(a.junit, diff_to_junit(d, ci));
  if (d.agree()) return kExitOk;
  if (excused) {
    io.err << "genrepro: diff: every run that parted diverged where the matrix knows tokens flip (known-fragile); "
              "exit 0 because of --allow-fragile\n";
    return kExitOk;
  }
  return kExitDiffer;
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
      "Runs whose ids differ but that ran the same cell (--pair-by) are paired and explained as a\n"
      "parameter change; a pair still fails. With --sensitivity, each token divergence is labelled\n"
      "known-fragile or unexpected (docs/sensitivity.md). 'genrepro help diff' is this text.\n"
      "Exit: 0 agree, 1 differ (or runs missing, extra or paired), 2 bad input.");
  cmd->add_option("GOLDEN", a->golden, "Golden evidence file, or a directory of them (e.g. golden/fixture)")
      ->type_name("PATH")
      ->required();
  cmd->add_option("EVIDENCE", a->evidence, "New evidence file (written by genrepro run)")->type_name("PATH")->required();
  cmd->add_flag("--json", a->json, "Print the machine-readable report (schema genrepro.diff/1, docs/diff.md)");
  cmd->add_flag("--brief", a->brief, "One line per run that parted (differing, paired, missing, extra), then the summary");
  cmd->add_option("--pair-by", a->pair_by,
                  "Pair a golden run the evidence lacks with a new run the golden lacks when they share these\n"
                  "keys, and explain the pair (\"parameter change: top_p 0.9 \u2192 0.95\", the first divergence, the\n"
                  "nucleus sizes, the stop); a pair still fails (exit 1). Keys: experiment, prompt, position\n"
                  "(the run's place among its prompt's runs), or any params key (seed, temperature, ...);\n"
                  "none: match by id only")
      ->type_name("KEY,...")
      ->capture_default_str();
  cmd->add_option("--prob-tolerance", a->prob_tolerance,
                  "Absolute tolerance for every compared probability (docs/diff.md says why the default)")
      ->type_name("FLOAT")
      ->capture_default_str();
  CLI::Option* junit = cmd->add_option("--junit", a->junit,
                                       "Also write a JUnit XML report to FILE: one test case per run; a differing,\n"
                                       "missing, extra or paired run is a failure naming the verdict, the token and both probabilities;\n"
                                       "missing parent directories are created")
                           ->type_name("PATH");
  cmd->add_option("--annotations", a->annotations,
                  "github: also print one GitHub Actions ::error line per failing run (and a ::warning for\n"
                  "environment differences), which the workflow shows as annotations")
      ->type_name("github");
  cmd->add_option("--sensitivity", a->sensitivity,
                  "A sensitivity.json (genrepro sensitivity --out DIR): label each run whose tokens diverged\n"
                  "known-fragile (this matrix flipped it at that new token, or the golden's top-1/top-2 logit\n"
                  "margin there is at most the matrix's m*) or unexpected; labels only, the exit code stays")
      ->type_name("PATH");
  cmd->add_flag("--allow-fragile", a->allow_fragile,
                "With --sensitivity: exit 0 when every failing run is a known-fragile token divergence (no\n"
                "missing, extra or paired run, no other difference)");
  on_verb(*cmd, ctx, [a, &ctx, junit] {
    a->junit_given = junit->count() > 0;
    ctx.exit_code = run_diff(*a, ctx.io);
  });
}

}  // namespace genrepro::cli
