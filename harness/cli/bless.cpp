// genrepro bless EVIDENCE --into DIR: the only way a golden changes. On a terminal it is a
// review, run by run (accept / reject / skip / accept all / quit, like `cargo insta review`);
// off one it takes --yes (every change) or --run ID (chosen runs). A golden run missing from the
// evidence is listed and kept unless --prune; a "regression" needs --accept-regressions or a typed
// confirmation; a dirty work tree is refused without --allow-dirty; DIR/blessed.tsv records the
// commit. docs/bless.md is the user's page.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/output_paths.hpp"
#include "cli/verbs.hpp"
#include "util/text_excerpt.hpp"
#include "compare/run_pairing.hpp"
#include "evidence/evidence.hpp"
#include "golden/golden_bless.hpp"
#include "golden/golden_journal.hpp"
#include "util/errors.hpp"

extern char** environ;

namespace genrepro::cli {

namespace {

namespace fs = std::filesystem;

struct BlessOptions {
  std::string evidence;
  std::string into;
  bool yes = false;
  bool update = false;  // --yes, and retire the golden runs an accepted new run of their cell replaced
  std::vector<std::string> runs;
  bool prune = false;
  bool accept_regressions = false;
  bool allow_dirty = false;
  bool no_color = false;
  bool refresh_bits = false;  // also rewrite agreeing runs whose recorded bits differ
};

constexpr int kExitBlessed = 0;     // every reviewed change is in the golden (or nothing changed)
constexpr int kExitNotAll = 1;      // some new or changed run was rejected or skipped: the golden still differs
// git's answers are a commit id, a path prefix and a status listing; more than this is not one.
constexpr std::size_t kMaxGitOutputBytes = 1 << 20;

// ---- where the bless comes from: git, asked without a shell ----

// `git <args>`'s stdout, or empty when git is missing or fails (DIR outside a work tree).
std::optional<std::string> git_output(const std::vector<std::string>& args) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  std::vector<std::string> argv_storage = {"git"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  std::string out;
  if (rc == 0) {
    std::array<char, 4096> buf;
    for (ssize_t n; (n = ::read(fds[0], buf.data(), buf.size())) > 0;)
      if (out.size() < kMaxGitOutputBytes) out.append(buf.data(), static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (rc != 0) return std::nullopt;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}


// A path from `git status --porcelain` (v1): "XY path" or "XY from -> to", quoted when unusual.
std::string status_path(const std::string& line) {
  std::string p = line.size() > 3 ? line.substr(3) : "";
  const std::size_t arrow = p.find(" -> ");
  if (arrow != std::string::npos) p = p.substr(arrow + 4);
  if (p.size() >= 2 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
  return p;
}

struct WorkTree {
  BlessSource source;
  std::string first_dirty;  // a tracked file outside DIR that differs from HEAD
  bool ignored = false;     // DIR is ignored by git (a scratch golden under build/): never committed
};

// The commit of the work tree holding DIR, and whether tracked files outside DIR differ from it
// (DIR's own changes are a previous bless waiting to be committed: they do not count), and
// whether git ignores DIR.
WorkTree probe_work_tree(const std::string& into) {
  WorkTree w;
  fs::path dir = fs::absolute(into).lexically_normal();
  fs::path existing = dir;
  std::error_code ec;
  while (!existing.empty() && !fs::is_directory(existing, ec) && existing != existing.parent_path()) existing = existing.parent_path();
  const std::string at = existing.string();
  const std::optional<std::string> head = git_output({"-C", at, "rev-parse", "HEAD"});
  const std::optional<std::string> prefix = git_output({"-C", at, "rev-parse", "--show-prefix"});
  const std::optional<std::string> status = git_output({"-C", at, "status", "--porcelain", "--untracked-files=no"});
  if (!head || !prefix || !status) {
    w.source.commit = "none (not in a git work tree)";
    w.source.in_git = false;
    return w;
  }
  w.source.commit = first_line(*head);
  // check-ignore exits 0 for an ignored path (existing or not) and 1 otherwise.
  w.ignored = git_output({"-C", at, "check-ignore", "-q", dir.string()}).has_value();
  // DIR itself usually exists, and is then "." from itself: "golden/fixture/." matched no path, so
  // the previous bless's golden/fixture/blessed.tsv was called a change outside DIR.
  const std::string below = dir.lexically_relative(existing).generic_string();
  std::string dir_prefix = first_line(*prefix) + (below == "." ? "" : below);
  if (!dir_prefix.empty() && dir_prefix.back() != '/') dir_prefix += '/';
  std::size_t from = 0;
  while (from < status->size()) {
    const std::size_t end = std::min(status->find('\n', from), status->size());
    const std::string path = status_path(status->substr(from, end - from));
    from = end + 1;
    if (path.empty() || (!dir_prefix.empty() && path.rfind(dir_prefix, 0) == 0)) continue;
    w.source.dirty = true;
    w.first_dirty = path;
    break;
  }
  return w;
}

// ---- deciding ----

struct Tally {
  std::size_t accepted = 0, rejected = 0, skipped = 0;
};

void decide(BlessDecisions& d, Tally& t, const std::string& id, Decision how) {
  d.runs[id] = how;
  (how == Decision::accept ? t.accepted : how == Decision::reject ? t.rejected : t.skipped)++;
}

// --run: every id must name a run of the evidence or of the golden files it maps to.
void check_chosen_runs(const BlessOptions& a, const BlessPlan& plan) {
  for (const std::string& id : a.runs)
    if (plan.find(id) == nullptr)
      throw UsageError("--run \"" + id + "\": no run with this id in " + a.evidence + " or in the golden files it maps to in " +
                       a.into + "; 'genrepro diff " + a.into + " " + a.evidence + "' lists the run ids");
}

// --yes / --run: accept every new or changed run (or the chosen ones); a regression only with
// --accept-regressions.
BlessDecisions decide_without_asking(const BlessOptions& a, const BlessPlan& plan, Tally& tally) {
  const std::set<std::string> chosen(a.runs.begin(), a.runs.end());
  BlessDecisions d;
  d.prune = a.prune;
  d.prune_only = chosen;
  for (const GoldenFilePlan& f : plan.files)
    for (const RunReview& r : f.runs) {
      if (!r.needs_decision()) continue;
      if (!chosen.empty() && !chosen.count(r.id)) {
        decide(d, tally, r.id, Decision::skip);
        continue;
      }
      if (r.is_regression() && !a.accept_regressions)
        throw UsageError("bless: run " + r.id + " in " + f.path + ": diff's verdict is regression (nothing explains the change); " +
                         "bless it only deliberately, with --accept-regressions, or leave it out with --run for the other runs");
      decide(d, tally, r.id, Decision::accept);
    }
  return d;
}

enum class Answer { accept, reject, skip, accept_all, quit };

std::optional<Answer> parse_answer(const std::string& line) {
  if (line == "a" || line == "accept" || line == "y" || line == "yes") return Answer::accept;
  if (line == "r" || line == "reject" || line == "n" || line == "no") return Answer::reject;
  if (line == "s" || line == "skip" || line.empty()) return Answer::skip;
  if (line == "A" || line == "all") return Answer::accept_all;
  if (line == "q" || line == "quit") return Answer::quit;
  return std::nullopt;
}

// One answer; an unknown one is asked again, end of input is quit.
Answer ask(Console& io) {
  for (;;) {
    io.out << "accept (a) / reject (r) / skip (s, Enter) / accept all (A) / quit (q)? " << std::flush;
    std::string line;
    if (!std::getline(io.in, line)) {
      io.out << "\n";
      return Answer::quit;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (const std::optional<Answer> a = parse_answer(line)) return *a;
    io.out << "  '" << line.substr(0, 20) << "' is not an answer\n";
  }
}

// One line of input, without a terminal's trailing \r; empty at end of input.
std::string answer_line(Console& io) {
  std::string line;
  if (!std::getline(io.in, line)) return {};
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// "Accept all" with regressions among the runs left: list them and ask once (a grid of 30
// regressions asked 30 times). True when every one of them may be blessed.
bool all_regressions_confirmed(Console& io, const std::vector<std::pair<const GoldenFilePlan*, const RunReview*>>& left) {
  std::vector<std::string> lines;
  for (const auto& [file, run] : left)
    if (run->is_regression()) lines.push_back(format_run_line(*file, *run, false));
  if (lines.empty()) return true;
  io.out << "  accept all: " << lines.size() << " of the " << left.size()
         << " runs left are REGRESSIONS (the model's output changed and nothing explains it):\n";
  for (const std::string& line : lines) io.out << "    " << line << "\n";
  io.out << "  Bless all " << lines.size() << " anyway? type 'yes' (anything else: they keep their golden, the other runs are accepted): "
         << std::flush;
  return answer_line(io) == "yes";
}

// A golden run missing from the evidence whose cell an accepted new run took (compare/run_pairing.hpp:
// same experiment, prompt, seed and grid position): the old id the change replaced.
struct Replaced {
  std::string old_id, new_id, change;
};

std::vector<Replaced> replaced_runs(const BlessPlan& plan, const BlessDecisions& d) {
  const std::vector<std::string> keys = parse_pair_by(kDefaultPairBy, "pairing");
  std::vector<Replaced> out;
  for (const GoldenFilePlan& f : plan.files) {
    if (!f.golden) continue;
    std::vector<const RunRecord*> g, n;
    for (const RunRecord& r : f.golden->runs) g.push_back(&r);
    for (const RunRecord& r : f.incoming.runs) n.push_back(&r);
    for (const RunPair& p : pair_runs(g, n, keys)) {
      const auto it = d.runs.find(p.current->id);
      if (it == d.runs.end() || it->second != Decision::accept) continue;
      out.push_back({p.golden->id, p.current->id, describe_pair(*p.golden, *p.current, kDefaultProbTolerance).change});
    }
  }
  return out;
}

std::string changes_of(const std::vector<Replaced>& replaced) {
  std::vector<std::string> changes;
  for (const Replaced& r : replaced)
    if (std::find(changes.begin(), changes.end(), r.change) == changes.end()) changes.push_back(r.change);
  std::string s;
  for (const std::string& c : changes) s += (s.empty() ? "" : "; ") + c;
  return s;
}

// On a terminal: offer to prune exactly the replaced runs (nothing else is pruned).
void offer_retirement(const BlessPlan& plan, BlessDecisions& d, Console& io) {
  if (d.prune) return;  // --prune removes every missing run anyway
  const std::vector<Replaced> replaced = replaced_runs(plan, d);
  if (replaced.empty()) return;
  io.out << "\n" << replaced.size() << " golden run(s) were replaced by an accepted new run of their cell (experiment, prompt, seed, position):\n";
  for (const Replaced& r : replaced) io.out << "  " << r.old_id << " \u2192 " << r.new_id << ": parameter change: " << r.change << "\n";
  io.out << "retire the " << replaced.size() << " old id(s) from the golden (as --prune would, only these)? [y/N] " << std::flush;
  const std::string answer = answer_line(io);
  if (answer != "y" && answer != "yes") {
    io.out << "  kept (--prune retires them later)\n";
    return;
  }
  d.prune = true;
  for (const Replaced& r : replaced) d.prune_only.insert(r.old_id);
  io.out << "  retiring " << replaced.size() << " old run(s)\n";
}

// --update: prune exactly the old ids the accepted new runs replaced (with --prune every missing
// run goes anyway; with --prune --run only the named ones, and these).
void retire(const std::vector<Replaced>& replaced, BlessDecisions& d, std::set<std::string>& retired) {
  if (replaced.empty()) return;
  if (d.prune && d.prune_only.empty()) return;
  if (!d.prune) d.prune_only.clear();
  d.prune = true;
  for (const Replaced& r : replaced) {
    d.prune_only.insert(r.old_id);
    retired.insert(r.old_id);
  }
}

// A regression is accepted only when the person types "yes".
bool regression_confirmed(Console& io) {
  io.out << "  this run is a REGRESSION: the model's output changed and nothing explains it. Bless it anyway? type 'yes': "
         << std::flush;
  std::string line;
  if (!std::getline(io.in, line)) return false;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line == "yes";
}

BlessDecisions review_on_terminal(const BlessOptions& a, const BlessPlan& plan, Console& io, Tally& tally) {
  BlessDecisions d;
  d.prune = a.prune;
  std::vector<std::pair<const GoldenFilePlan*, const RunReview*>> queue;
  for (const GoldenFilePlan& f : plan.files)
    for (const RunReview& r : f.runs) {
      if (r.needs_decision()) queue.emplace_back(&f, &r);
      if (r.change == RunChange::missing) io.out << format_run_line(f, r, a.prune) << "\n";
    }
  const bool color = !a.no_color;
  bool all = false, quit = false;
  bool all_confirmed = false;  // after "accept all": the one answer for every regression left
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const auto& [file, run] = queue[i];
    if (quit) {
      decide(d, tally, run->id, Decision::skip);
      continue;
    }
    io.out << "\n[" << (i + 1) << "/" << queue.size() << "] " << format_run_line(*file, *run, a.prune) << "\n"
           << format_token_diff(*file, *run, color);
    Answer answer = Answer::accept;
    if (!all) answer = ask(io);
    if (answer == Answer::quit) {
      quit = true;
      decide(d, tally, run->id, Decision::skip);
      continue;
    }
    if (answer == Answer::accept_all) {
      all = true;
      all_confirmed = a.accept_regressions ||
                      all_regressions_confirmed(io, {queue.begin() + static_cast<std::ptrdiff_t>(i), queue.end()});
    }
    if (answer == Answer::reject) {
      decide(d, tally, run->id, Decision::reject);
    } else if (answer == Answer::skip) {
      decide(d, tally, run->id, Decision::skip);
    } else if (run->is_regression() && !a.accept_regressions && !(all ? all_confirmed : regression_confirmed(io))) {
      io.out << "  not blessed: the golden keeps its run\n";
      decide(d, tally, run->id, Decision::skip);
    } else {
      if (all && answer != Answer::accept_all) io.out << "  accepted (accept all)\n";
      decide(d, tally, run->id, Decision::accept);
    }
  }
  return d;
}

// --refresh-bits: the unchanged runs with bit-only drift (every one, or the --run ones). A file
// whose numerics change is refreshed whole or not at all: it holds one numerics record.
std::set<std::string> refresh_asked(const BlessOptions& a, const BlessPlan& plan) {
  std::set<std::string> out;
  if (!a.refresh_bits) return out;
  const std::set<std::string> chosen(a.runs.begin(), a.runs.end());
  for (const GoldenFilePlan& f : plan.files) {
    std::vector<std::string> drifted, named;
    for (const RunReview& r : f.runs)
      if (r.change == RunChange::unchanged && !r.drift.empty()) {
        drifted.push_back(r.id);
        if (chosen.empty() || chosen.count(r.id)) named.push_back(r.id);
      }
    if (!f.numerics_change.empty() && !named.empty() && named.size() < drifted.size())
      throw UsageError("--refresh-bits --run " + named.front() + ": " + f.path + " holds runs of " + f.numerics_change +
                       " (one numerics record per file), so its " + std::to_string(drifted.size()) +
                       " drifted runs are refreshed together or not at all; leave out --run for this file's runs, or name all of them");
    out.insert(named.begin(), named.end());
  }
  return out;
}

// ---- the verb ----

int run_bless(const BlessOptions& a, Console& io) {
  check_output_directory("--into", a.into);
  std::error_code ec;
  if (fs::exists(a.into, ec) && !fs::is_directory(a.into, ec))
    throw UsageError("--into " + a.into + ": exists and is not a directory; give the golden directory (created if missing)");
  const EvidenceFile evidence = read_evidence_file(a.evidence);
  // One bless at a time per directory, from reading the golden to writing it: two at once would
  // each write what it read, and one's accepted runs would be lost.
  const GoldenDirLock lock = GoldenDirLock::acquire(a.into);
  for (const std::string& line : recover_interrupted_bless(a.into)) io.out << line << "\n";
  const BlessPlan plan = plan_bless(evidence, a.into);
  check_chosen_runs(a, plan);
  const std::size_t to_review = plan.count(RunChange::added) + plan.count(RunChange::changed);
  const std::size_t missing = plan.count(RunChange::missing);
  const std::set<std::string> refresh = refresh_asked(a, plan);
  if (to_review == 0 && (missing == 0 || !a.prune) && refresh.empty()) {
    io.out << format_bless_preview(plan, a.prune);
    io.out << "bless: " << a.into << " already holds every run of " << a.evidence << "; nothing written";
    const std::size_t drifted = drifted_runs(plan).size();
    if (drifted > 0 && !a.refresh_bits)
      io.out << " (" << drifted << " run(s) agree with other bits; --refresh-bits rewrites them)";
    io.out << "\n";
    return kExitBlessed;
  }
  // Refreshing bits alone was asked for by the flag itself: there is nothing else to decide.
  const bool only_refresh = to_review == 0 && !(missing > 0 && a.prune);
  const bool interactive = !a.yes && !a.update && a.runs.empty() && !only_refresh;
  if (interactive && !io.in_is_terminal) {
    io.out << format_bless_preview(plan, a.prune);  // what would change, before the refusal
    throw UsageError("bless: not asking without a terminal (stdin is not a tty); re-run with --yes to bless all " +
                     std::to_string(to_review) + " new or changed run(s) into " + a.into +
                     " (--update: and retire the golden runs they replaced), or --run ID for chosen runs");
  }
  WorkTree tree = probe_work_tree(a.into);
  tree.source.evidence_path = a.evidence;
  // A golden git ignores is never committed, so no commit could describe it either way.
  if (tree.source.dirty && !tree.ignored && !a.allow_dirty)
    throw UsageError("bless: the work tree holding " + a.into + " has uncommitted changes outside it (" + tree.first_dirty +
                     "); commit them first so the golden records the commit it came from, or pass --allow-dirty");
  Tally tally;
  BlessDecisions decisions;
  if (interactive) {
    io.out << format_shared_differences(plan);
    for (const GoldenFilePlan& f : plan.files)
      for (const RunReview& r : f.runs)
        if (refresh.count(r.id)) io.out << format_run_line(f, r, a.prune, {}, refresh) << "\n";
    decisions = review_on_terminal(a, plan, io, tally);
    offer_retirement(plan, decisions, io);
  } else {
    decisions = decide_without_asking(a, plan, tally);
    decisions.refresh = refresh;
    const std::vector<Replaced> replaced = replaced_runs(plan, decisions);
    std::set<std::string> retired;
    if (a.update) retire(replaced, decisions, retired);
    io.out << format_bless_preview(plan, a.prune, retired, refreshed_runs(plan, decisions));
    if (!retired.empty())
      io.out << "bless: retiring " << retired.size() << " golden run(s) that an accepted new run of their cell replaced ("
             << changes_of(replaced) << "); golden runs the evidence only lacks are kept (--prune removes them)\n";
    else if (!replaced.empty() && !a.prune)
      io.out << "bless: " << replaced.size() << " golden run(s) were replaced by a new run of their cell (" << changes_of(replaced)
             << "); kept: --prune retires them (and every other missing run); --update retires only these\n";
  }
  decisions.refresh = refresh;
  const std::size_t refreshed = refreshed_runs(plan, decisions).size();
  const std::vector<std::string> written = write_golden(plan, decisions, tree.source, a.into);
  for (const std::string& path : written) io.out << "bless: wrote " << path << "\n";
  io.out << "bless: " << tally.accepted << " accepted, " << tally.rejected << " rejected, " << tally.skipped << " skipped";
  if (refreshed > 0) io.out << ", " << refreshed << " refreshed (bits only)";
  io.out << "; "
         << (written.empty() ? std::string("nothing written") : "wrote " + std::to_string(written.size()) + " golden file(s) into " + a.into)
         << " (blessed from commit " << tree.source.commit << (tree.source.dirty ? ", dirty work tree" : "") << ")\n";
  return tally.rejected + tally.skipped == 0 ? kExitBlessed : kExitNotAll;
}

}  // namespace

void setup_bless(CLI::App& app, VerbContext& ctx) {
  auto a = std::make_shared<BlessOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bless",
      "Make EVIDENCE the golden, run by run: one file per experiment, DIR/<experiment>.json, volatile fields\n"
      "(created_utc, timing, threads.runs_concurrently) stripped, each written atomically, and DIR/blessed.tsv\n"
      "recording the commit. On a terminal: a review of each new or changed run (verdict, first divergence,\n"
      "token diff) asking accept / reject / skip / accept all / quit. Off a terminal: --yes or --run ID.\n"
      "A golden run missing from EVIDENCE is kept unless --prune; on a terminal, bless offers to retire\n"
      "the ones a new run of the same cell replaced (a parameter change); --update does both without asking.\n"
      "docs/bless.md.\n"
      "Exit: 0 written (or nothing to change), 1 some run rejected or skipped, 2 bad input, no terminal\n"
      "without --yes/--run, an unconfirmed regression, or a dirty work tree.");
  cmd->add_option("EVIDENCE", a->evidence, "Evidence file to bless (written by genrepro run)")->type_name("PATH")->required();
  cmd->add_option("--into", a->into, "Golden directory (e.g. golden/fixture); created if missing, with its parents")
      ->type_name("DIR")
      ->required();
  cmd->add_flag("--yes", a->yes, "Bless every new or changed run without asking (e.g. in CI)");
  cmd->add_flag("--update", a->update,
                "After a deliberate change, in one command: --yes, and retire the golden runs an accepted new run of the\n"
                "same cell replaced (a parameter change; each listed with its replacement). Golden runs the evidence\n"
                "only lacks are kept unless --prune");
  cmd->add_option("--run", a->runs, "Bless only this run (repeatable); every other run keeps its golden")
      ->type_name("ID")
      ->allow_extra_args(false);
  cmd->add_flag("--prune", a->prune, "Remove golden runs the evidence does not have (with --run: only the named ones)");
  cmd->add_flag("--accept-regressions", a->accept_regressions, "Bless runs whose diff verdict is regression without the extra confirmation");
  cmd->add_flag("--allow-dirty", a->allow_dirty, "Bless although tracked files outside DIR have uncommitted changes");
  cmd->add_flag("--no-color", a->no_color, "No colours in the review's token diff");
  cmd->add_flag("--refresh-bits", a->refresh_bits,
                "Also rewrite the runs that agree with the golden but whose recorded bits differ (logits digests,\n"
                "probabilities within the tolerance, a new numerics mode), each listed with what differs (with --run:\n"
                "only the named ones). A run whose tokens or verdict changed is never refreshed: it is reviewed as changed");
  on_verb(*cmd, ctx, [a, &ctx] { ctx.exit_code = run_bless(*a, ctx.io); });
}

}  // namespace genrepro::cli
