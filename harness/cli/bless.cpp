// genrepro bless EVIDENCE --into DIR: the only way a golden changes. Shows what would change,
// asks on a terminal, needs --yes otherwise, and writes one file per experiment atomically.
#include <memory>
#include <string>

#include "cli/verbs.hpp"
#include "util/errors.hpp"
#include "evidence/evidence.hpp"
#include "evidence/golden_bless.hpp"

namespace genrepro::cli {

namespace {

struct BlessOptions {
  std::string evidence;
  std::string into;
  bool yes = false;
};

constexpr int kExitBlessed = 0;
constexpr int kExitNotConfirmed = 1;  // the golden still differs from the evidence

bool confirmed_on_terminal(std::size_t files, const std::string& dir, Console& io) {
  io.out << "Write " << files << " golden file(s) into " << dir << "? [y/N] " << std::flush;
  std::string answer;
  if (!std::getline(io.in, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

int run_bless(const BlessOptions& a, Console& io) {
  const EvidenceFile evidence = read_evidence_file(a.evidence);
  const std::vector<GoldenFilePlan> plans = plan_bless(evidence, a.into);
  io.out << format_bless_preview(plans);
  std::size_t changing = 0;
  for (const GoldenFilePlan& p : plans) changing += p.changes ? 1 : 0;
  if (changing == 0) {
    io.out << "bless: " << a.into << " already agrees with " << a.evidence << "; nothing written\n";
    return kExitBlessed;
  }
  if (!a.yes) {
    if (!io.in_is_terminal)
      throw UsageError("bless: not asking without a terminal (stdin is not a tty); re-run with --yes to write " +
                       std::to_string(changing) + " golden file(s) into " + a.into);
    if (!confirmed_on_terminal(changing, a.into, io)) {
      io.out << "bless: not confirmed; nothing written\n";
      return kExitNotConfirmed;
    }
  }
  const std::size_t written = write_golden(plans);
  io.out << "bless: wrote " << written << " golden file(s) into " << a.into << "\n";
  return kExitBlessed;
}

}  // namespace

void setup_bless(CLI::App& app, VerbContext& ctx) {
  auto a = std::make_shared<BlessOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bless",
      "Make EVIDENCE the golden: one file per experiment, DIR/<experiment>.json, volatile fields\n"
      "(created_utc, timing, threads.runs_concurrently) stripped, each written atomically. Shows\n"
      "the diff against DIR first; asks y/N on a terminal, and needs --yes otherwise.\n"
      "Exit: 0 written (or nothing to change), 1 not confirmed, 2 bad input or no terminal without --yes.");
  cmd->add_option("EVIDENCE", a->evidence, "Evidence file to bless (written by genrepro run)")->required();
  cmd->add_option("--into", a->into, "Golden directory (e.g. golden/fixture); created if missing")->required();
  cmd->add_flag("--yes", a->yes, "Write without asking (required when stdin is not a terminal, e.g. in CI)");
  on_verb(*cmd, ctx, [a, &ctx] { ctx.exit_code = run_bless(*a, ctx.io); });
}

}  // namespace genrepro::cli
