#include "golden/golden_bless.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include "compare/diff_ci_report.hpp"
#include "compare/run_pairing.hpp"
#include "evidence/value_text.hpp"
#include "golden/golden_journal.hpp"
#include "params/experiment_file.hpp"
#include "util/atomic_file.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;

// A token diff shows this many common tokens before the first difference, for orientation, and at
// most this many of each side's own tokens after it: enough to read, short enough for one line.
constexpr std::size_t kContextTokens = 6;
constexpr std::size_t kTailTokens = 16;
// Long values (torch_config, loaded libraries) are cut in the shared-differences block.
constexpr std::size_t kMaxShownChars = 60;
// A blessed.tsv is a line per golden file; anything this big is not one.
constexpr std::uintmax_t kMaxRecordBytes = 1 << 20;
// How much of a refused name an error shows.
constexpr std::size_t kMaxShownNameChars = 80;

constexpr const char* kRed = "\x1b[31m";
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kReset = "\x1b[0m";

std::string json_quoted(const std::string& s) { return OrderedJson(s).dump(-1, ' ', false, OrderedJson::error_handler_t::replace); }

// Text from evidence is shown on a terminal: control characters (ESC above all) must not reach it.
std::string printable(const std::string& s) {
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// A token's text inside a shown continuation: JSON-escaped, without the quotes.
std::string token_piece(const std::string& text) {
  const std::string q = json_quoted(text);
  return q.substr(1, q.size() - 2);
}

bool plain_name_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}
bool alnum(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// The evidence restricted to one experiment: its runs and its experiments[] entry.
Evidence part_of(const Evidence& e, const std::string& experiment) {
  Evidence part;
  part.schema = e.schema;
  part.genrepro = e.genrepro;
  part.created_utc = e.created_utc;
  part.environment = e.environment;
  // How the bits were computed (mode, CPU kernels) is part of what was blessed: without it every
  // later diff listed "numerics.cpu_kernels: (absent) -> portable" as a likely cause.
  part.numerics = e.numerics;
  part.model = e.model;
  for (const RunRecord& r : e.runs)
    if (r.experiment == experiment) part.runs.push_back(r);
  // What decided llama.cpp's bits goes with its runs (evidence_checks: only beside them).
  if (std::any_of(part.runs.begin(), part.runs.end(), [](const RunRecord& r) { return r.params.engine == Engine::llama_cpp; }))
    part.llama_cpp = e.llama_cpp;
  for (const ExperimentRecord& x : e.experiments)
    if (x.name == experiment) part.experiments.push_back(x);
  return part;
}

// Bless replaces regular files only: a link could point anywhere, outside DIR included.
void check_writable_target(const std::string& path, const char* what) {
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st)) return;
  if (fs::is_symlink(st))
    throw EvidenceError(path + ": " + what + " is a symlink; bless writes regular files only and never follows or replaces "
                        "a link in the golden directory — replace the link with the file itself, or bless into another directory");
  if (!fs::is_regular_file(st)) throw EvidenceError(path + ": " + what + " exists and is not a regular file; remove it or bless into another directory");
}

// "numerics reference -> strict" when the two files' bits were computed differently, else empty.
std::string numerics_change(const GoldenFilePlan& p) {
  const NumericsRecord none;
  const OrderedJson g = numerics_identity_json(p.golden && p.golden->numerics ? *p.golden->numerics : none);
  const OrderedJson n = numerics_identity_json(p.incoming.numerics ? *p.incoming.numerics : none);
  if (g == n) return "";
  const auto mode = [](const OrderedJson& j) { return j.value("mode", std::string("?")); };
  if (mode(g) != mode(n)) return "numerics " + mode(g) + " \u2192 " + mode(n);
  return "numerics " + g.dump() + " \u2192 " + n.dump();
}

// What an agreeing run's record differs in (RunReview::drift): how many steps' records differ,
// whether the logits digests say the logits did, the largest probability change, the numerics.
std::string drift_of(const RunRecord& golden, const RunRecord& current, const RunDiff& d, const std::string& numerics) {
  OrderedJson g = run_to_json(golden), c = run_to_json(current);
  for (OrderedJson* j : {&g, &c}) {
    j->erase("timing");  // volatile
    j->erase("index");   // where the run sits in its evidence, not what it computed
  }
  std::vector<std::string> parts;
  if (g != c) {
    const OrderedJson &gs = g["steps"], &cs = c["steps"];
    std::size_t differing = 0;
    for (std::size_t i = 0; i < gs.size() && i < cs.size(); ++i) differing += gs[i] != cs[i];
    std::string s = std::to_string(differing) + " of " + std::to_string(cs.size()) + " steps' records differ";
    if (d.logits_identical && !*d.logits_identical) s += " (logits digests from " + new_token_label(d.logits_first_difference_step.value_or(0)) + ")";
    if (d.max_prob_difference > 0) s += ", largest |\u0394 prob| " + show_delta(d.max_prob_difference);
    parts.push_back(s);
  }
  if (!numerics.empty() && !parts.empty()) parts.push_back(numerics);
  std::string out;
  for (const std::string& part : parts) out += (out.empty() ? "" : "; ") + part;
  return out;
}

void add_reviews(GoldenFilePlan& p, const EvidenceDiffOptions& options) {
  if (p.golden) p.numerics_change = numerics_change(p);
  const std::string& numerics = p.numerics_change;
  std::map<std::string, std::size_t> golden_index;
  if (p.golden)
    for (std::size_t i = 0; i < p.golden->runs.size(); ++i) golden_index.emplace(p.golden->runs[i].id, i);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < p.incoming.runs.size(); ++i) {
    const RunRecord& run = p.incoming.runs[i];
    RunReview r;
    r.id = run.id;
    r.current = i;
    const auto it = golden_index.find(run.id);
    if (it == golden_index.end()) {
      r.change = RunChange::added;
    } else {
      seen.insert(run.id);
      r.golden = it->second;
      RunDiff d = diff_run(p.golden->runs[it->second], run, options.prob_tolerance);
      r.change = d.verdict == Verdict::agree ? RunChange::unchanged : RunChange::changed;
      if (r.change == RunChange::changed)
        r.diff = std::move(d);
      else
        r.drift = drift_of(p.golden->runs[it->second], run, d, numerics);
    }
    p.runs.push_back(std::move(r));
  }
  if (!p.golden) return;
  for (std::size_t i = 0; i < p.golden->runs.size(); ++i) {
    if (seen.count(p.golden->runs[i].id)) continue;
    RunReview r;
    r.id = p.golden->runs[i].id;
    r.change = RunChange::missing;
    r.golden = i;
    p.runs.push_back(std::move(r));
  }
}

// A new run and a missing one of the same cell (experiment, prompt, seed, position) are one run
// whose parameters changed (its id hashes them): each review names the other and the change, as
// diff's pairs do, so a changed framework or control reads as what it is.
void add_pairs(GoldenFilePlan& p) {
  if (!p.golden) return;
  std::vector<const RunRecord*> g, n;
  for (const RunRecord& r : p.golden->runs) g.push_back(&r);
  for (const RunRecord& r : p.incoming.runs) n.push_back(&r);
  std::map<std::string, RunReview*> review_of;
  for (RunReview& r : p.runs) review_of[(r.change == RunChange::missing ? "g:" : "n:") + r.id] = &r;
  for (const RunPair& pair : pair_runs(g, n, parse_pair_by(kDefaultPairBy, "pairing"))) {
    const auto gi = review_of.find("g:" + pair.golden->id), ni = review_of.find("n:" + pair.current->id);
    if (gi == review_of.end() || ni == review_of.end()) continue;
    const std::string change = describe_pair(*pair.golden, *pair.current, kDefaultProbTolerance).change;
    gi->second->paired_with = pair.current->id;
    gi->second->paired_change = change;
    ni->second->paired_with = pair.golden->id;
    ni->second->paired_change = change;
  }
}

bool accepted(const BlessDecisions& d, const std::string& id) {
  const auto it = d.runs.find(id);
  return it != d.runs.end() && it->second == Decision::accept;
}

bool pruned(const BlessDecisions& d, const std::string& id) {
  return d.prune && (d.prune_only.empty() || d.prune_only.count(id) > 0);
}

// Golden runs kept although the evidence lacks them go back where they were: right after the
// nearest earlier golden run that is in the output, or first.
void insert_kept_missing(const GoldenFilePlan& p, const std::vector<std::size_t>& kept, std::vector<RunRecord>& runs) {
  for (std::size_t gi : kept) {
    std::size_t at = 0;
    for (std::size_t g = gi; g-- > 0;) {
      const std::string& before = p.golden->runs[g].id;
      const auto it = std::find_if(runs.begin(), runs.end(), [&](const RunRecord& r) { return r.id == before; });
      if (it != runs.end()) {
        at = static_cast<std::size_t>(it - runs.begin()) + 1;
        break;
      }
    }
    runs.insert(runs.begin() + static_cast<std::ptrdiff_t>(at), p.golden->runs[gi]);
  }
}

// The run ids an experiments[] entry expands to. The entry was read from a golden file the reader
// has already checked, so it expands; a failure here is a bug, not bad input.
std::set<std::string> ids_of(const ExperimentRecord& x, const std::string& file) {
  const ExperimentSpec spec = parse_experiment(x.spec.dump(), file + ": experiments[].spec", RunBudget{kMaxRunsCeiling, 0});
  std::set<std::string> ids;
  for (const ExpandedRun& run : spec.runs) ids.insert(run.id);
  return ids;
}

// A kept golden run may come from an earlier version of the experiment than the evidence's: the
// golden file keeps that version's experiments[] entry too, so every run it holds is a point of a
// recorded spec (the reader's consistency check) and the file says how the run was made.
void keep_specs_of_kept_runs(const GoldenFilePlan& plan, const std::vector<std::size_t>& kept, Evidence& doc) {
  std::set<std::string> covered;
  for (const ExperimentRecord& x : doc.experiments) {
    const std::set<std::string> ids = ids_of(x, plan.path);
    covered.insert(ids.begin(), ids.end());
  }
  std::set<std::string> uncovered;
  for (std::size_t gi : kept)
    if (!covered.count(plan.golden->runs[gi].id)) uncovered.insert(plan.golden->runs[gi].id);
  for (const ExperimentRecord& x : plan.golden->experiments) {
    if (uncovered.empty()) return;
    if (x.name != plan.experiment) continue;
    const std::set<std::string> ids = ids_of(x, plan.path);
    const bool needed = std::any_of(uncovered.begin(), uncovered.end(), [&](const std::string& id) { return ids.count(id) > 0; });
    if (!needed) continue;
    doc.experiments.push_back(x);
    for (const std::string& id : ids) uncovered.erase(id);
  }
}

std::string shown_value(const OrderedJson& j) {
  std::string s = printable(show_json(j));
  if (s.size() > kMaxShownChars) s = s.substr(0, kMaxShownChars) + "...(" + std::to_string(s.size()) + " chars)";
  return s;
}

struct SharedDifference {
  ValueDifference difference;
  std::vector<std::string> files;
};

void collect(std::vector<SharedDifference>& into, const std::vector<ValueDifference>& found, const std::string& file) {
  for (const ValueDifference& d : found) {
    auto it = std::find_if(into.begin(), into.end(), [&](const SharedDifference& s) {
      return s.difference.path == d.path && s.difference.golden == d.golden && s.difference.current == d.current;
    });
    if (it == into.end()) it = into.insert(into.end(), SharedDifference{d, {}});
    it->files.push_back(file);
  }
}

void write_shared(std::ostringstream& o, const char* heading, const std::vector<SharedDifference>& list, std::size_t files) {
  if (list.empty()) return;
  o << heading << "\n";
  for (const SharedDifference& s : list) {
    o << "  " << s.difference.path << ": " << shown_value(s.difference.golden) << " -> " << shown_value(s.difference.current);
    if (s.files.size() < files) {
      std::string names;
      for (const std::string& f : s.files) names += (names.empty() ? "" : ", ") + f;
      o << " (" << names << ")";
    }
    o << "\n";
  }
}

std::string file_name_of(const GoldenFilePlan& p) { return fs::path(p.path).filename().string(); }

// ", 3 with other bits (refreshed)" for the unchanged runs whose records drifted in bits only.
std::string drift_summary(const GoldenFilePlan& p, const std::set<std::string>& refresh) {
  std::size_t drifted = 0, refreshed = 0;
  for (const RunReview& r : p.runs)
    if (r.change == RunChange::unchanged && !r.drift.empty()) {
      ++drifted;
      refreshed += refresh.count(r.id);
    }
  if (drifted == 0) return "";
  if (refreshed == drifted) return ", " + std::to_string(drifted) + " with other bits (refreshed)";
  if (refreshed == 0) return ", " + std::to_string(drifted) + " with other bits (left as is; --refresh-bits refreshes them)";
  return ", " + std::to_string(drifted) + " with other bits (" + std::to_string(refreshed) + " refreshed)";
}

std::string file_summary(const GoldenFilePlan& p, bool prune, const std::set<std::string>& retired, const std::set<std::string>& refresh) {
  if (!p.exists()) return "new, " + std::to_string(p.runs.size()) + " runs";
  const std::size_t changed = p.count(RunChange::changed), added = p.count(RunChange::added),
                    missing = p.count(RunChange::missing), same = p.count(RunChange::unchanged);
  if (changed + added + missing == 0) {
    const std::string drift = drift_summary(p, refresh);
    if (drift.find("refreshed)") != std::string::npos) return "agrees, " + std::to_string(same) + " runs" + drift;
    return "agrees, left as is, " + std::to_string(same) + " runs" + drift;
  }
  std::string s = "changes: ";
  std::vector<std::string> parts;
  if (changed) parts.push_back(std::to_string(changed) + " changed");
  if (added) parts.push_back(std::to_string(added) + " new");
  std::size_t replaced = 0;
  for (const RunReview& r : p.runs)
    if (r.change == RunChange::missing && retired.count(r.id)) ++replaced;
  if (replaced) parts.push_back(std::to_string(replaced) + " retired (replaced by a new run of their cell)");
  if (missing > replaced)
    parts.push_back(std::to_string(missing - replaced) + " missing from the evidence (" + (prune ? "pruned" : "kept") + ")");
  parts.push_back(std::to_string(same) + " unchanged");
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + drift_summary(p, refresh);
}

// ---- blessed.tsv ----

std::string tsv_field(const std::string& s) {
  std::string out;
  for (char c : s) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  return out.empty() ? "-" : out;
}

std::vector<std::string> old_record_lines(const std::string& path) {
  check_writable_target(path, "the bless record");
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  if (fs::file_size(path, ec) > kMaxRecordBytes)
    throw EvidenceError(path + ": the bless record is larger than " + std::to_string(kMaxRecordBytes) +
                        " bytes; it holds one line per golden file — restore it from git");
  const BoundedRead record = read_bounded(path, kMaxRecordBytes);
  if (!record.ok()) throw EvidenceError(path + ": " + record.problem);
  std::vector<std::string> lines;
  std::istringstream in(record.text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') lines.push_back(line);
  return lines;
}

// DIR/blessed.tsv as it will be: its line for each written file, every other line kept.
std::string record_text(const std::string& path, const std::vector<std::pair<const GoldenFilePlan*, std::size_t>>& written,
                        const BlessSource& source) {
  std::map<std::string, std::string> lines;  // by golden file name: sorted, so the record diffs well
  for (const std::string& line : old_record_lines(path)) lines[line.substr(0, line.find('\t'))] = line;
  for (const auto& [plan, runs] : written) {
    const std::string name = file_name_of(*plan);
    const std::string tree = !source.in_git ? "not in git" : source.dirty ? "dirty" : "clean";
    lines[name] = name + "\t" + tsv_field(source.commit) + "\t" + tree + "\t" + tsv_field(source.evidence_path) + "\t" +
                  tsv_field(plan->incoming.genrepro.git_commit) + "\t" + std::to_string(runs);
  }
  std::string text =
      "# genrepro bless: the commit each golden file here was blessed from (written by 'genrepro bless'; docs/bless.md)\n"
      "# file\tblessed_from_commit\twork_tree\tevidence\tevidence_genrepro_commit\truns\n";
  for (const auto& [name, line] : lines) text += line + "\n";
  return text;
}

}  // namespace

const char* to_string(RunChange c) {
  switch (c) {
    case RunChange::added: return "new";
    case RunChange::changed: return "changed";
    case RunChange::unchanged: return "unchanged";
    case RunChange::missing: return "missing";
  }
  return "?";
}

std::size_t GoldenFilePlan::count(RunChange c) const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [c](const RunReview& r) { return r.change == c; }));
}

std::size_t BlessPlan::count(RunChange c) const {
  std::size_t n = 0;
  for (const GoldenFilePlan& f : files) n += f.count(c);
  return n;
}

const RunReview* BlessPlan::find(const std::string& id) const {
  for (const GoldenFilePlan& f : files)
    for (const RunReview& r : f.runs)
      if (r.id == id) return &r;
  return nullptr;
}

void check_golden_name(const std::string& name, const std::string& where) {
  const bool ok = !name.empty() && name.size() <= kMaxGoldenNameLength && alnum(name.front()) &&
                  std::all_of(name.begin(), name.end(), plain_name_char);
  if (ok) return;
  std::string shown = json_quoted(name.substr(0, kMaxShownNameChars));
  if (name.size() > kMaxShownNameChars) shown += "... (" + std::to_string(name.size()) + " bytes)";
  throw EvidenceError(where + ": expected an experiment name of 1 to " + std::to_string(kMaxGoldenNameLength) +
                      " letters, digits, '_', '-' or '.', starting with a letter or digit (bless writes DIR/<name>.json and "
                      "nothing outside DIR), found " + shown + "; regenerate the evidence with 'genrepro run'");
}

std::string golden_file_name(const std::string& experiment) {
  check_golden_name(experiment, "experiment");
  return experiment + ".json";
}

BlessPlan plan_bless(const EvidenceFile& evidence, const std::string& into_dir, const EvidenceDiffOptions& options) {
  const std::vector<RunRecord>& runs = evidence.evidence.runs;
  for (std::size_t i = 0; i < runs.size(); ++i)
    check_golden_name(runs[i].experiment, evidence.path + ": runs[" + std::to_string(i) + "].experiment");
  if (runs.empty()) throw EvidenceError(evidence.path + ": holds no runs; there is nothing to bless");
  std::vector<std::string> order;  // experiments in first-run order
  for (const RunRecord& r : runs)
    if (std::find(order.begin(), order.end(), r.experiment) == order.end()) order.push_back(r.experiment);
  BlessPlan plan;
  plan.files.reserve(order.size());
  for (const std::string& e : order) {
    GoldenFilePlan p;
    p.experiment = e;
    p.path = (fs::path(into_dir) / golden_file_name(e)).string();
    check_writable_target(p.path, "the golden file");
    p.incoming = part_of(evidence.evidence, e);
    std::error_code ec;
    if (fs::exists(p.path, ec)) {
      p.golden = read_evidence(p.path);
      const EvidenceDiff d = diff_evidence({EvidenceFile{p.path, *p.golden}}, EvidenceFile{evidence.path, p.incoming}, options);
      p.environment = d.environment;
      p.provenance = d.provenance;
    }
    add_reviews(p, options);
    add_pairs(p);
    plan.files.push_back(std::move(p));
  }
  return plan;
}

std::optional<OrderedJson> compose_golden(const GoldenFilePlan& plan, const BlessDecisions& decisions) {
  bool any_accepted = false, any_change = false;
  for (const RunReview& r : plan.runs) {
    const bool taken = r.needs_decision() ? accepted(decisions, r.id)
                                          : r.change == RunChange::unchanged && !r.drift.empty() && decisions.refresh.count(r.id);
    any_accepted = any_accepted || taken;
    any_change = any_change || taken || (r.change == RunChange::missing && pruned(decisions, r.id));
  }
  if (!any_change) return std::nullopt;
  // A file holds one numerics record: when it takes the evidence's and that differs from the
  // golden's, every run it keeps from both sides must be the evidence's.
  const bool file_takes_new_numerics = any_accepted && !plan.numerics_change.empty();
  std::vector<RunRecord> out;
  std::vector<std::size_t> kept_missing;
  for (const RunReview& r : plan.runs) {
    switch (r.change) {
      case RunChange::added:
      case RunChange::changed:
        if (accepted(decisions, r.id))
          out.push_back(*plan.current_run(r));
        else if (r.change == RunChange::changed)
          out.push_back(*plan.golden_run(r));
        break;
      case RunChange::unchanged: {
        // A drifted run keeps its golden record unless refreshed (or the numerics move with the file).
        const bool from_evidence = r.drift.empty() || decisions.refresh.count(r.id) || file_takes_new_numerics;
        out.push_back(from_evidence ? *plan.current_run(r) : *plan.golden_run(r));
        break;
      }
      case RunChange::missing:
        if (!pruned(decisions, r.id)) kept_missing.push_back(*r.golden);
        break;
    }
  }
  insert_kept_missing(plan, kept_missing, out);
  if (out.empty())  // every golden run pruned and no new run accepted
    throw EvidenceError(plan.path + ": the decisions would leave the golden file with no runs; if the experiment is gone, "
                        "remove the file with git rm, otherwise accept its runs");
  Evidence doc = any_accepted || !plan.golden ? plan.incoming : *plan.golden;
  doc.runs = std::move(out);
  if (!kept_missing.empty() && plan.golden) keep_specs_of_kept_runs(plan, kept_missing, doc);
  return strip_volatile(evidence_to_json(doc));
}

std::string format_shared_differences(const BlessPlan& plan) {
  std::vector<SharedDifference> environment, provenance;
  std::size_t existing = 0;
  for (const GoldenFilePlan& f : plan.files) {
    if (!f.exists()) continue;
    ++existing;
    collect(environment, f.environment, file_name_of(f));
    collect(provenance, f.provenance, file_name_of(f));
  }
  std::ostringstream o;
  write_shared(o, "environment differs from the golden (likely causes, not failures; every file unless named):", environment, existing);
  write_shared(o, "provenance differs from the golden (build, model files; every file unless named):", provenance, existing);
  return o.str();
}

namespace {

std::string paired_change_text(const RunReview& run) {
  return " (parameter change: " + (run.paired_change.empty() ? std::string("none, the same parameters under another id") : printable(run.paired_change)) + ")";
}

}  // namespace

std::string format_run_line(const GoldenFilePlan& file, const RunReview& run, bool prune, const std::set<std::string>& retired,
                            const std::set<std::string>& refresh) {
  std::string line = file_name_of(file) + ": " + to_string(run.change) + " run " + printable(run.id) + ": ";
  switch (run.change) {
    case RunChange::added: {
      const RunRecord& r = *file.current_run(run);
      line += "not in the golden; " + std::to_string(r.result.output_ids.size()) + " new tokens, stop " + to_string(r.result.stop_reason);
      if (run.paired_with) line += "; replaces golden run " + printable(*run.paired_with) + " of its cell" + paired_change_text(run);
      break;
    }
    case RunChange::changed: line += printable(run_difference_line(*run.diff)); break;
    case RunChange::unchanged:
      line += "agrees with the golden";
      if (!run.drift.empty())
        line += "; bits only: " + printable(run.drift) +
                (refresh.count(run.id) ? "; refreshed (--refresh-bits)" : "; left as is (--refresh-bits refreshes it)");
      break;
    case RunChange::missing:
      if (run.paired_with && retired.count(run.id)) {
        line += "in the golden, not in the evidence: retired, replaced by new run " + printable(*run.paired_with) + " of its cell" +
                paired_change_text(run);
        break;
      }
      line += prune ? "in the golden, not in the evidence: removed (--prune)"
                    : "in the golden, not in the evidence: kept (--prune removes it)";
      if (run.paired_with) line += "; replaced by new run " + printable(*run.paired_with) + paired_change_text(run);
      break;
  }
  return line;
}

std::string format_token_diff(const GoldenFilePlan& file, const RunReview& run, bool color) {
  const RunRecord* g = file.golden_run(run);
  const RunRecord* n = file.current_run(run);
  if (!n) return "";
  const auto& ns = n->result.steps;
  const auto piece = [](const RunRecord& r, std::size_t i) {
    const StepRecord& s = r.result.steps[i];
    return s.token_id ? token_piece(s.token_text) : std::string();
  };
  const auto span = [&](const RunRecord& r, std::size_t from, std::size_t to) {
    std::string s;
    for (std::size_t i = from; i < to && i < r.result.steps.size(); ++i) s += piece(r, i);
    return s;
  };
  const auto mark = [&](const std::string& text, const char* ansi, const char* open, const char* close) {
    return color ? std::string(ansi) + text + kReset : std::string(open) + text + close;
  };
  if (!g) {
    const std::size_t shown = std::min(ns.size(), kTailTokens);
    return "  new:    \"" + mark(span(*n, 0, shown), kGreen, "{+", "+}") + (ns.size() > shown ? "..." : "") + "\"\n";
  }
  const auto& gs = g->result.steps;
  std::size_t k = 0;
  while (k < gs.size() && k < ns.size() && gs[k].token_id == ns[k].token_id) ++k;
  if (k == gs.size() && k == ns.size())
    return "  tokens: the same " + std::to_string(k) + " new tokens; the difference is in probabilities or other fields\n";
  const std::size_t from = k > kContextTokens ? k - kContextTokens : 0;
  const std::string lead = (from > 0 ? "..." : "") + span(*g, from, k);
  const auto side = [&](const RunRecord& r, const char* ansi, const char* open, const char* close) {
    const std::size_t size = r.result.steps.size();
    const std::size_t to = std::min(size, k + kTailTokens);
    if (k >= size) return "\"" + lead + "\" (stopped here)";
    return "\"" + lead + mark(span(r, k, to), ansi, open, close) + (size > to ? "..." : "") + "\"";
  };
  return "  first different token: " + new_token_label(static_cast<int64_t>(k)) + "\n" +
         "  golden: " + side(*g, kRed, "[-", "-]") + "\n" + "  new:    " + side(*n, kGreen, "{+", "+}") + "\n";
}

std::string format_bless_preview(const BlessPlan& plan, bool prune, const std::set<std::string>& retired,
                                 const std::set<std::string>& refresh) {
  std::ostringstream o;
  o << format_shared_differences(plan);
  for (const GoldenFilePlan& f : plan.files)
    for (const RunReview& r : f.runs)
      if ((r.change != RunChange::unchanged || !r.drift.empty()) && (f.exists() || r.change != RunChange::added))
        o << format_run_line(f, r, prune, retired, refresh) << "\n";
  for (const GoldenFilePlan& f : plan.files) o << "bless: " << f.path << ": " << file_summary(f, prune, retired, refresh) << "\n";
  return o.str();
}

std::set<std::string> refreshed_runs(const BlessPlan& plan, const BlessDecisions& decisions) {
  std::set<std::string> out;
  for (const GoldenFilePlan& f : plan.files) {
    bool accepted_any = false;
    for (const RunReview& r : f.runs)
      accepted_any = accepted_any || (r.needs_decision() ? accepted(decisions, r.id)
                                                         : !r.drift.empty() && decisions.refresh.count(r.id) > 0);
    const bool whole_file = accepted_any && !f.numerics_change.empty();
    for (const RunReview& r : f.runs)
      if (r.change == RunChange::unchanged && !r.drift.empty() && (whole_file || decisions.refresh.count(r.id))) out.insert(r.id);
  }
  return out;
}

std::vector<std::string> drifted_runs(const BlessPlan& plan) {
  std::vector<std::string> ids;
  for (const GoldenFilePlan& f : plan.files)
    for (const RunReview& r : f.runs)
      if (r.change == RunChange::unchanged && !r.drift.empty()) ids.push_back(r.id);
  return ids;
}

void write_json_atomically(const std::string& path, const OrderedJson& doc) {
  try {
    write_file_atomically(path, doc.dump(2, ' ', false, OrderedJson::error_handler_t::strict) + "\n");
  } catch (const Error& e) {
    throw EvidenceError(std::string(e.what()) + " (golden file; the previous one, if any, is unchanged)");
  }
}

std::vector<std::string> write_golden(const BlessPlan& plan, const BlessDecisions& decisions, const BlessSource& source,
                                      const std::string& into_dir, const std::function<void(std::size_t)>& after_rename) {
  // Compose every file first, so nothing is written when one of them cannot be built; then the
  // golden files and their record lines are one journaled write (golden/golden_journal.hpp).
  std::vector<GoldenWrite> writes;
  std::vector<std::string> written;
  std::vector<std::pair<const GoldenFilePlan*, std::size_t>> record;
  for (const GoldenFilePlan& f : plan.files) {
    std::optional<OrderedJson> doc = compose_golden(f, decisions);
    if (!doc) continue;
    check_writable_target(f.path, "the golden file");
    writes.push_back({f.path, doc->dump(2, ' ', false, OrderedJson::error_handler_t::strict) + "\n"});
    written.push_back(f.path);
    record.emplace_back(&f, (*doc)["runs"].size());
  }
  if (writes.empty()) return written;
  const std::string record_path = (fs::path(into_dir) / kBlessRecordName).string();
  writes.push_back({record_path, record_text(record_path, record, source)});
  write_golden_files(into_dir, writes, after_rename);
  return written;
}

}  // namespace genrepro
