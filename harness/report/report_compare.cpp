#include "report/report_compare.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "golden/article_check.hpp"
#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "compare/run_pairing.hpp"
#include "evidence/run_environment_groups.hpp"
#include "report/report_text.hpp"
#include "util/significant_digits.hpp"

namespace genrepro {

namespace {

// Enough of a continuation to see where two runs part; the A/B table is not the place for all of it.
constexpr std::size_t kContinuationBytes = 48;
// An A/B table with more rows than this shows only the differing ones, the whole table folded.
constexpr std::size_t kMaxUnfoldedAbRows = 12;
// Tokens an A/B excerpt shows on each side of the first token where the runs part.
constexpr std::size_t kExcerptTokens = 6;
// Environment paths listed in a verdict's note; the rest are counted.
constexpr std::size_t kMaxListedEnvironment = 6;
// Run indices a "which runs ran where" table names before it counts the rest.
constexpr std::size_t kRunIndicesInTable = 64;

ReportBlock block(ReportBlock::Kind kind, const std::string& text, int level = 2) {
  ReportBlock b;
  b.kind = kind;
  b.text = text;
  b.level = level;
  return b;
}

ReportBlock table_block(ReportTable t) {
  ReportBlock b = block(ReportBlock::Kind::table, "");
  b.table = std::move(t);
  return b;
}

// A row with its links and marks kept the same length as the header.
void add_row(ReportTable& t, std::vector<std::string> cells, std::vector<std::string> links = {}, std::vector<bool> marked = {}) {
  cells.resize(t.header.size());
  links.resize(t.header.size());
  marked.resize(t.header.size());
  t.rows.push_back(std::move(cells));
  t.links.push_back(std::move(links));
  t.marked.push_back(std::move(marked));
}

std::string token_text(const TokenAtStep& t, std::optional<double> p) {
  if (!t.id) return "(none: the run had stopped)";
  return std::to_string(*t.id) + " " + quoted_token(t.text) + (p ? " p " + format_prob(*p) : std::string());
}

const RunRecord* find_run(const Evidence& e, const std::string& id) {
  for (const RunRecord& r : e.runs)
    if (r.id == id) return &r;
  return nullptr;
}

std::string experiment_of(const std::string& id, const Evidence& evidence, const std::vector<EvidenceFile>& golden) {
  if (const RunRecord* r = find_run(evidence, id)) return r->experiment;
  for (const EvidenceFile& g : golden)
    if (const RunRecord* r = find_run(g.evidence, id)) return r->experiment;
  return "";
}

// The first new token with any difference: the one diff's reason ("why") names too, so the two
// columns never number differently; where the tokens part later, that is said beside it.
std::string first_difference(const RunDiff& r) {
  if (r.first_difference_step) {
    std::string s = new_token_label(*r.first_difference_step);
    if (r.divergence && r.divergence->step != *r.first_difference_step) s += "; the tokens part at " + new_token_label(r.divergence->step);
    return s;
  }
  if (r.divergence) return new_token_label(r.divergence->step);
  return "run-level (text, stop or parameters)";
}

// "Numerics (sensitivity matrix m.json: 9 cells, m* 0.0253): 2 of the 3 token divergences are
// known-fragile, 1 unexpected." The labels explain; the verdict above stays the gate's.
std::string fragility_summary(const FragilityKnowledge& k, const std::vector<RunFragility>& labels) {
  std::size_t fragile = 0;
  for (const RunFragility& f : labels)
    if (f.label == FragilityLabel::known_fragile) ++fragile;
  return "Numerics (sensitivity matrix " + quoted_token(k.path) + ": " + std::to_string(k.compared_cells) +
         " cells against its reference, m* " + (k.m_star ? three_digits(*k.m_star) : std::string("none")) + "): " +
         std::to_string(fragile) + " of the " + std::to_string(labels.size()) + " token divergence(s) known-fragile, " +
         std::to_string(labels.size() - fragile) + " unexpected (docs/sensitivity.md). The labels explain; they do not "
         "change the verdict.";
}

// "known-fragile: logit margin 0.0253 <= m* 0.0253; flipped there in 1 of 9 cells", or empty for a
// run without a token divergence.
std::string numerics_label(const std::vector<RunFragility>& labels, const std::string& id) {
  for (const RunFragility& f : labels)
    if (f.id == id) return std::string(to_string(f.label)) + ": " + f.why;
  return "";
}

void add_verdict_table(const EvidenceDiff& d, const ReportDocument& doc, const ReportOptions& options,
                       const std::vector<RunFragility>& labels, std::vector<ReportBlock>& out) {
  ReportTable t;
  t.header = {"run", "verdict", "first difference", "golden token", "new token", "why"};
  t.numeric = {false, false, false, false, false, false};
  const bool labelled = options.sensitivity.has_value();
  if (labelled) {
    t.header.push_back("numerics (--sensitivity)");
    t.numeric.push_back(false);
  }
  const auto link = [&](const std::string& id) { return experiment_heading(experiment_of(id, doc.evidence, options.golden)); };
  for (const RunDiff& r : d.runs) {
    if (r.verdict == Verdict::agree) continue;
    std::string golden_token, new_token;
    if (r.divergence) {
      golden_token = token_text(r.divergence->golden, r.divergence->golden.prob_in_golden);
      new_token = token_text(r.divergence->current, r.divergence->current.prob_in_new);
    }
    std::vector<std::string> cells = {r.id, to_string(r.verdict), first_difference(r), golden_token, new_token, numbers_gated(r.reason)};
    if (labelled) cells.push_back(numbers_gated(numerics_label(labels, r.id)));
    add_row(t, cells, {link(r.id)}, {false, true, true});
  }
  const auto row = [&](std::vector<std::string> cells) {
    if (labelled) cells.push_back("");
    return cells;
  };
  for (const std::string& id : d.missing) add_row(t, row({id, "missing", "", "", "", "in the golden, not in this evidence"}), {link(id)}, {false, true});
  for (const std::string& id : d.extra) add_row(t, row({id, "extra", "", "", "", "in this evidence, not in the golden"}), {link(id)});
  out.push_back(table_block(std::move(t)));
}

// One line (how many fields, the first few paths), the values folded away: CPU flags alone can be
// twenty lines, and they are likely causes, never failures.
void add_environment_note(const EvidenceDiff& d, std::vector<ReportBlock>& out) {
  if (d.environment.empty()) return;
  std::string paths;
  for (std::size_t i = 0; i < d.environment.size() && i < kMaxListedEnvironment; ++i) paths += (i ? ", " : "") + d.environment[i].path;
  if (d.environment.size() > kMaxListedEnvironment) paths += ", ...";
  out.push_back(block(ReportBlock::Kind::note, "The environment differs from the golden's in " + std::to_string(d.environment.size()) +
                                                   " field(s) (likely causes, never failures): " + paths + "."));
  out.push_back(block(ReportBlock::Kind::fold_begin, "Environment differences, field by field (" + std::to_string(d.environment.size()) + ")"));
  ReportTable t;
  t.header = {"field", "golden", "this evidence"};
  t.numeric = {false, false, false};
  for (const ValueDifference& v : d.environment) add_row(t, {v.path, show_json(v.golden), show_json(v.current)});
  out.push_back(table_block(std::move(t)));
  out.push_back(block(ReportBlock::Kind::fold_end, ""));
}

// The environment the golden's runs ran in. Golden files are blessed from one machine's evidence;
// where they are not, diff compares with each and the first stands for them here.
const Environment& golden_run_environment(const ReportOptions& options) { return options.golden.front().evidence.environment; }

// The label of one environment of a merged file, as the evidence holds it.
std::string merged_environment_name(const RunEnvironmentGroup& g) {
  return std::to_string(g.number) + (g.number == 1 ? ": the file's environment" : ": run_environments[" + std::to_string(g.number - 2) + "]");
}

std::string short_stop(const RunRecord& r) {
  const std::string n = std::to_string(r.result.stop_step);
  switch (r.result.stop_reason) {
    case StopReason::eos: return "EOS at new token " + n;
    case StopReason::max_new_tokens: return "limit, " + n + " tokens";
    case StopReason::context_full: return "context full, " + n + " tokens";
  }
  return n;
}

std::string continuation_start(const RunRecord& r) {
  std::string c = r.continuation;
  if (c.size() <= kContinuationBytes) return quoted_token(c);
  std::size_t cut = kContinuationBytes;
  while (cut > 0 && (static_cast<unsigned char>(c[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
  return quoted_token(c.substr(0, cut)) + "…";
}

// An excerpt of r's new tokens around new token k + 1 (k 0-based, the first position where the
// files' runs part): kExcerptTokens before it and after it, each stretch of tokens that differ
// from `other` at their positions marked once ⟦like this⟧ (after the runs part nearly every
// token differs, and a bracket per token made the text unreadable), so the excerpt shows the
// difference itself, not a start both runs share.
std::string excerpt_at(const RunRecord& r, const std::vector<const RunRecord*>& others, std::size_t k) {
  const auto& steps = r.result.steps;
  const auto& ids = r.result.output_ids;
  const std::size_t from = k > kExcerptTokens ? k - kExcerptTokens : 0;
  const std::size_t to = std::min(ids.size(), k + kExcerptTokens + 1);
  std::string text;
  bool open = false;
  for (std::size_t i = from; i < to; ++i) {
    const std::string token = i < steps.size() ? steps[i].token_text : "";
    bool differs = false;
    for (const RunRecord* o : others)
      differs = differs || (o && o != &r && (i >= o->result.output_ids.size() || o->result.output_ids[i] != ids[i]));
    if (differs != open) text += differs ? "\u27E6" : "\u27E7";
    open = differs;
    text += token;
  }
  if (open) text += "\u27E7";
  return std::string(from > 0 ? "…" : "") + quoted_token(text) + (to < ids.size() ? "…" : "") +
         (k >= ids.size() ? " (stops before new token " + std::to_string(k + 1) + ")" : "");
}

// The first position where any file's run of one id has another new token than the first file's.
std::optional<std::size_t> first_parting(const std::vector<const RunRecord*>& runs) {
  if (!runs[0]) return std::nullopt;
  std::optional<std::size_t> first;
  const auto& a = runs[0]->result.output_ids;
  for (const RunRecord* r : runs) {
    if (!r || r == runs[0]) continue;
    const auto& b = r->result.output_ids;
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    if (i == a.size() && i == b.size()) continue;
    first = first ? std::min(*first, i) : i;
  }
  return first;
}

// Run ids in the order they first appear, with each document's run of that id.
std::vector<std::pair<std::string, std::vector<const RunRecord*>>> runs_by_id(const std::vector<ReportDocument>& documents) {
  std::vector<std::pair<std::string, std::vector<const RunRecord*>>> rows;
  std::map<std::string, std::size_t> where;
  for (std::size_t d = 0; d < documents.size(); ++d)
    for (const RunRecord& r : documents[d].evidence.runs) {
      const auto [it, fresh] = where.emplace(r.id, rows.size());
      if (fresh) rows.push_back({r.id, std::vector<const RunRecord*>(documents.size(), nullptr)});
      rows[it->second].second[d] = &r;
    }
  return rows;
}

std::string status_text(FactStatus s) {
  switch (s) {
    case FactStatus::match: return "match";
    case FactStatus::mismatch: return "differs";
    case FactStatus::missing: return "not in the evidence";
    case FactStatus::unchecked: return "not checked";
  }
  return "";
}

void add_article_check(const ArticleCheck& c, std::vector<ReportBlock>& out) {
  ReportTable t;
  t.header = {"fact", "article", "evidence", "", "note"};
  t.numeric = {false, false, false, false, false};
  for (const FactCheck& f : c.facts) {
    std::string note = f.note + (f.counted ? "" : (f.note.empty() ? "" : "; ") + std::string("not counted"));
    const std::string where = fact_environment_text(c, f);
    if (!where.empty()) note += (note.empty() ? "" : "; ") + where;
    add_row(t, {f.fact, f.expected, f.found, status_text(f.status), note}, {},
            {false, false, false, f.status == FactStatus::mismatch || f.status == FactStatus::missing});
  }
  const std::size_t counted = static_cast<std::size_t>(std::count_if(c.facts.begin(), c.facts.end(), [](const FactCheck& f) { return f.counted; }));
  out.push_back(block(ReportBlock::Kind::paragraph,
                      std::to_string(c.count(FactStatus::match)) + " of " + std::to_string(counted) + " counted facts match, " +
                          std::to_string(c.count(FactStatus::mismatch)) + " differ, " + std::to_string(c.count(FactStatus::missing)) +
                          " are not in the evidence: " +
                          (c.passed() ? "the evidence reproduces the article." : "the evidence does not reproduce the article.")));
  out.push_back(table_block(std::move(t)));
  if (c.model_source == "fixture")
    out.push_back(block(ReportBlock::Kind::note,
                        "The model is the random-weight fixture: its texts, stops and nucleus sizes are not expected to match "
                        "the article's (GPT-2's); the EOS id comes from GPT-2's config and should."));
}

}  // namespace

std::string experiment_heading(const std::string& experiment) {
  return "Experiment " + (experiment.empty() ? std::string("(unnamed)") : quoted_token(experiment));
}

void add_run_environments(const Evidence& evidence, const Environment& reference, const std::string& reference_name,
                          const std::string& reference_column, std::vector<ReportBlock>& out) {
  if (evidence.run_environments.empty()) return;
  const std::vector<RunEnvironmentGroup> groups = run_environment_groups(evidence, reference);
  if (!any_environment_differs(groups)) return;
  const std::size_t differing = static_cast<std::size_t>(
      std::count_if(groups.begin(), groups.end(), [](const RunEnvironmentGroup& g) { return !g.differences.empty(); }));
  out.push_back(block(ReportBlock::Kind::note, "The runs ran in " + std::to_string(groups.size()) +
                                                   " environments (shards merged from different machines); " + std::to_string(differing) +
                                                   (differing == 1 ? " differs" : " differ") + " from " + reference_name +
                                                   " (likely causes, never failures)."));
  ReportTable summary;
  summary.header = {"runs", "environment", "where it differs from " + reference_name};
  summary.numeric = {false, false, false};
  std::size_t fields = 0;
  for (const RunEnvironmentGroup& g : groups) {
    fields += g.differences.size();
    add_row(summary, {runs_text(g.runs, kRunIndicesInTable), merged_environment_name(g),
                      g.differences.empty() ? std::string("nowhere") : differences_text(g.differences)},
            {}, {false, false, !g.differences.empty()});
  }
  out.push_back(table_block(std::move(summary)));
  out.push_back(block(ReportBlock::Kind::fold_begin, "Environment differences, run by run and field by field (" + std::to_string(fields) + ")"));
  ReportTable t;
  t.header = {"runs", "field", reference_column, "these runs"};
  t.numeric = {false, false, false, false};
  for (const RunEnvironmentGroup& g : groups)
    for (const EnvironmentFieldDifference& f : g.differences) add_row(t, {runs_text(g.runs), f.field, show_json(f.reference), show_json(f.value)});
  out.push_back(table_block(std::move(t)));
  out.push_back(block(ReportBlock::Kind::fold_end, ""));
}

void add_verdict_section(const std::vector<ReportDocument>& documents, const ReportOptions& options, std::vector<ReportBlock>& out) {
  if (options.golden.empty()) return;
  out.push_back(block(ReportBlock::Kind::heading, "Verdict against the golden"));
  for (const ReportDocument& doc : documents) {
    const EvidenceDiff d = diff_evidence(options.golden, EvidenceFile{doc.name, doc.evidence}, {});
    const std::string who = documents.size() > 1 ? doc.shown() + ": " : std::string();
    // The verdict as one large line, green or red; the counts below it.
    if (d.agree()) {
      out.push_back(block(ReportBlock::Kind::verdict_pass, who + "PASS: every run reproduces the golden."));
      out.push_back(block(ReportBlock::Kind::paragraph, numbers_gated(diff_summary_line(d)) + "."));
    } else {
      out.push_back(block(ReportBlock::Kind::verdict_fail, who + "FAIL: " + std::to_string(d.differing()) + " run(s) differ, " +
                                                               std::to_string(d.missing.size()) + " missing, " +
                                                               std::to_string(d.extra.size()) + " extra."));
      out.push_back(block(ReportBlock::Kind::paragraph, "The evidence does not reproduce the golden. " + numbers_gated(diff_summary_line(d)) + "."));
      std::vector<RunFragility> labels;
      if (options.sensitivity) {
        labels = label_divergences(d, options.golden, EvidenceFile{doc.name, doc.evidence}, *options.sensitivity);
        out.push_back(block(ReportBlock::Kind::paragraph, fragility_summary(*options.sensitivity, labels)));
      }
      add_verdict_table(d, doc, options, labels, out);
    }
    if (doc.evidence.run_environments.empty())
      add_environment_note(d, out);
    else
      add_run_environments(doc.evidence, golden_run_environment(options), "the golden's environment", "golden", out);
  }
  // How to read it, after the verdict: the PASS or FAIL line is the first thing under the heading.
  out.push_back(block(ReportBlock::Kind::paragraph,
                      "Each run compared with the golden in " + quoted_token(options.golden_name) +
                          " by genrepro diff's rules (docs/diff.md): the verdict, the first new token that differs (counted "
                          "from 1, with its index in steps[]), both tokens with their probabilities. Each run links to its "
                          "experiment below."));
}

// Two files whose runs' ids differ only because a parameter changed (top_p 0.9 -> 0.95 gives
// every run a new id): the runs only the first holds are paired with those only the second holds
// by experiment, prompt, seed and grid position (compare/run_pairing.hpp), one row per pair, so
// the A/B view compares the two settings instead of listing every run as missing from one side.
// Returns the pairs' change texts by row ("parameter change: top_p 0.9 → 0.95").
std::map<std::size_t, std::string> pair_rows(const std::vector<ReportDocument>& documents,
                                             std::vector<std::pair<std::string, std::vector<const RunRecord*>>>& rows) {
  std::map<std::size_t, std::string> changes;
  if (documents.size() != 2) return changes;
  // Files made from the same experiment files (shards of one grid, reruns) hold other runs of the
  // same settings, not changed settings: their runs are pooled, never paired.
  const auto specs = [](const Evidence& e) {
    std::set<std::pair<std::string, std::string>> s;
    for (const ExperimentRecord& x : e.experiments) s.emplace(x.name, x.sha256);
    return s;
  };
  if (specs(documents[0].evidence) == specs(documents[1].evidence)) return changes;
  std::vector<const RunRecord*> only_a, only_b;
  for (const auto& [id, runs] : rows) {
    if (runs[0] && !runs[1]) only_a.push_back(runs[0]);
    if (!runs[0] && runs[1]) only_b.push_back(runs[1]);
  }
  const std::vector<RunPair> pairs = pair_runs(only_a, only_b, parse_pair_by(kDefaultPairBy, "pairing"));
  if (pairs.empty()) return changes;
  std::map<std::string, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.size(); ++i) row_of[rows[i].first] = i;
  std::set<std::size_t> absorbed;
  for (const RunPair& p : pairs) {
    const PairedRun described = describe_pair(*p.golden, *p.current, kDefaultProbTolerance);
    if (described.change.empty()) continue;  // the same parameters under another id: not a change to explain
    const std::size_t a = row_of.at(p.golden->id), b = row_of.at(p.current->id);
    rows[a].first = p.golden->id + " → " + p.current->id;
    rows[a].second[1] = p.current;
    absorbed.insert(b);
    changes[a] = pair_verdict(described);
  }
  std::vector<std::pair<std::string, std::vector<const RunRecord*>>> kept;
  std::map<std::size_t, std::string> moved;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (absorbed.count(i)) continue;
    if (changes.count(i)) moved[kept.size()] = changes[i];
    kept.push_back(std::move(rows[i]));
  }
  rows = std::move(kept);
  return moved;
}

void add_ab_section(const std::vector<ReportDocument>& documents, std::vector<ReportBlock>& out) {
  if (documents.size() < 2) return;
  auto rows = runs_by_id(documents);
  const std::map<std::size_t, std::string> paired = pair_rows(documents, rows);
  const bool shared = std::any_of(rows.begin(), rows.end(), [](const auto& row) {
    return std::count(row.second.begin(), row.second.end(), nullptr) + 1 < static_cast<std::ptrdiff_t>(row.second.size());
  });
  if (!shared) return;
  const std::string& first = documents[0].shown();
  std::string names;
  for (const ReportDocument& d : documents) names += (names.empty() ? "" : "; ") + d.shown() + (d.label.empty() ? "" : " = " + d.name);
  out.push_back(block(ReportBlock::Kind::heading, "A/B: the evidence files side by side"));
  out.push_back(block(ReportBlock::Kind::paragraph,
                      "Runs matched by id across " + names + ". Every file after the first is compared with " + first +
                          " by genrepro diff's rules (docs/diff.md); highlighted cells differ from " + first +
                          ". Where runs part, each continuation is an excerpt around the first new token that differs, "
                          "the differing tokens marked \u27E6like this\u27E7." +
                          (paired.empty() ? std::string()
                                          : " " + std::to_string(paired.size()) +
                                                " rows pair two runs whose ids differ because a parameter changed "
                                                "(same experiment, prompt, seed and grid position; docs/diff.md, \"Pairing across a parameter change\").")));
  ReportTable t;
  t.header = {kRunIdColumn};
  for (const ReportDocument& d : documents) {
    t.header.push_back(d.shown() + ": stop");
    t.header.push_back(d.shown() + ": continuation");
  }
  for (std::size_t d = 1; d < documents.size(); ++d) t.header.push_back(documents[d].shown() + " vs " + first);
  t.numeric.assign(t.header.size(), false);
  std::size_t compared = 0, differ = 0;
  for (std::size_t row = 0; row < rows.size(); ++row) {
    const auto& [id, runs] = rows[row];
    const auto change = paired.find(row);
    std::vector<std::string> cells = {id};
    std::vector<bool> marked = {false};
    std::string experiment;
    const std::optional<std::size_t> parting = first_parting(runs);
    for (const RunRecord* r : runs) {
      if (r && experiment.empty()) experiment = r->experiment;
      const bool missing = r == nullptr;
      const bool stop_differs = r && runs[0] && short_stop(*r) != short_stop(*runs[0]);
      const bool text_differs = r && runs[0] && r->continuation != runs[0]->continuation;
      cells.push_back(missing ? "(not in this file)" : short_stop(*r));
      cells.push_back(missing ? "" : parting ? excerpt_at(*r, runs, *parting) : continuation_start(*r));
      marked.push_back(missing || stop_differs);
      marked.push_back(text_differs);
    }
    for (std::size_t d = 1; d < runs.size(); ++d) {
      if (!runs[0] || !runs[d]) {
        cells.push_back("");
        marked.push_back(false);
        continue;
      }
      const RunDiff rd = diff_run(*runs[0], *runs[d], kDefaultProbTolerance);
      ++compared;
      differ += rd.verdict != Verdict::agree;
      std::string verdict = rd.verdict == Verdict::agree ? "agree" : std::string(to_string(rd.verdict)) + " at " + first_difference(rd);
      if (change != paired.end() && d == 1) verdict = change->second + "; " + (rd.divergence ? "the tokens part at " + first_difference(rd) : "the same tokens");
      cells.push_back(verdict);
      marked.push_back(rd.verdict != Verdict::agree);
    }
    add_row(t, std::move(cells), {experiment_heading(experiment)}, std::move(marked));
  }
  out.push_back(block(ReportBlock::Kind::paragraph, std::to_string(compared) + " comparisons with " + first + ": " +
                                                        std::to_string(compared - differ) + " agree, " + std::to_string(differ) + " differ."));
  if (t.rows.size() <= kMaxUnfoldedAbRows) {
    out.push_back(table_block(std::move(t)));
    return;
  }
  // Many runs (a grid): the rows with a difference stay in view, every row is folded below them.
  ReportTable differing = t;
  differing.rows.clear();
  differing.links.clear();
  differing.marked.clear();
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    if (std::find(t.marked[r].begin(), t.marked[r].end(), true) == t.marked[r].end()) continue;
    differing.rows.push_back(t.rows[r]);
    differing.links.push_back(t.links[r]);
    differing.marked.push_back(t.marked[r]);
  }
  if (!differing.rows.empty()) out.push_back(table_block(std::move(differing)));
  out.push_back(block(ReportBlock::Kind::fold_begin, "All " + std::to_string(t.rows.size()) + " runs side by side"));
  out.push_back(table_block(std::move(t)));
  out.push_back(block(ReportBlock::Kind::fold_end, ""));
}

void add_article_section(const std::vector<ReportDocument>& documents, const ReportOptions& options, std::vector<ReportBlock>& out) {
  if (!options.article_facts) return;
  out.push_back(block(ReportBlock::Kind::heading, "Against the article"));
  out.push_back(block(ReportBlock::Kind::paragraph,
                      "What the article published for real GPT-2 (" + options.article_name +
                          ") beside the evidence: its texts, where its runs stop (new tokens counted from 1), the first "
                          "prediction's nucleus sizes and the EOS token. Runs are found by their parameters, as genrepro "
                          "check-article finds them."));
  for (const ReportDocument& doc : documents) {
    if (documents.size() > 1) out.push_back(block(ReportBlock::Kind::heading, "Article vs " + doc.shown(), 3));
    const EvidenceFile evidence{doc.name, doc.evidence};
    add_article_check(options.golden.empty() ? check_article(*options.article_facts, options.article_name, evidence)
                                             : check_article(*options.article_facts, options.article_name, evidence,
                                                             golden_run_environment(options), "the golden's environment"),
                      out);
  }
}

namespace {

double number_or(const OrderedJson& obj, const char* key, double fallback) {
  return obj.contains(key) && obj[key].is_number() ? obj[key].get<double>() : fallback;
}

bool temperature_before_top_p(const std::vector<SamplerStage>& order) {
  const auto t = std::find(order.begin(), order.end(), SamplerStage::temperature);
  const auto p = std::find(order.begin(), order.end(), SamplerStage::top_p);
  return t == order.end() || p == order.end() || t < p;
}

bool same_generation(const OrderedJson& params, const RunRecord& run) {
  const SamplingParams& s = run.params.sampling;
  if (!params.is_object() || number_or(params, "max_new_tokens", -1) != static_cast<double>(run.params.max_new_tokens)) return false;
  const bool greedy = s.mode == DecodeMode::greedy;
  if (params.contains("mode") && params["mode"] == "greedy") return greedy;
  return !greedy && s.rng == Rng::torch && s.top_p_rule == TopPRule::article && s.top_k == 0 &&
         temperature_before_top_p(s.sampler_order) && number_or(params, "temperature", 1) == s.temperature &&
         number_or(params, "top_p", 1) == s.top_p && number_or(params, "seed", -1) == static_cast<double>(s.seed);
}

}  // namespace

std::optional<int64_t> article_nucleus(const OrderedJson& facts, const RunRecord& run) {
  const SamplingParams& s = run.params.sampling;
  if (s.rng != Rng::torch || s.top_p_rule != TopPRule::article || !temperature_before_top_p(s.sampler_order)) return std::nullopt;
  if (!facts.contains("prompt") || facts["prompt"] != run.prompt || s.top_k != 0 || !facts.contains("nucleus_sizes") ||
      !facts["nucleus_sizes"].is_array())
    return std::nullopt;
  for (const OrderedJson& n : facts["nucleus_sizes"]) {
    if (!n.is_object() || !n.contains("temperature") || !n.contains("top_p") || !n.contains("step") || !n.contains("kept")) continue;
    if (!n["temperature"].is_number() || !n["top_p"].is_number() || !n["step"].is_number() || !n["kept"].is_number()) continue;
    if (n["temperature"].get<double>() == s.temperature && n["top_p"].get<double>() == s.top_p && n["step"].get<double>() == 0)
      return n["kept"].get<int64_t>();
  }
  return std::nullopt;
}

std::string stop_as_article_says(const RunRecord& run) {
  return std::string(to_string(run.result.stop_reason)) + " at new token " + std::to_string(run.result.stop_step);
}

std::optional<std::string> article_stop(const OrderedJson& facts, const RunRecord& run) {
  if (!facts.contains("prompt") || facts["prompt"] != run.prompt || !facts.contains("generations") || !facts["generations"].is_array())
    return std::nullopt;
  for (const OrderedJson& g : facts["generations"]) {
    if (!g.is_object() || !g.contains("params") || !same_generation(g["params"], run) || !g.contains("stop")) continue;
    const OrderedJson& stop = g["stop"];
    if (!stop.is_object() || !stop.contains("reason") || !stop["reason"].is_string() || !stop.contains("step") || !stop["step"].is_number())
      continue;
    return stop["reason"].get<std::string>() + " at new token " + std::to_string(stop["step"].get<int64_t>());
  }
  return std::nullopt;
}

}  // namespace genrepro
