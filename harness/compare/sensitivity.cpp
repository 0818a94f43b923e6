#include "compare/sensitivity.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <unordered_map>

#include "evidence/logits_digest.hpp"
#include "params/experiment_file.hpp"
#include "evidence/value_text.hpp"
#include "util/significant_digits.hpp"

namespace genrepro {

namespace {

bool records_draws(const RunRecord& run) {
  return std::any_of(run.result.steps.begin(), run.result.steps.end(), [](const StepRecord& s) { return s.draw.has_value(); });
}

// decisive_margin with the run's records_draws computed once (a run's steps are judged one by one).
std::optional<double> step_decisive_margin(const SamplingParams& s, const StepRecord& step, bool run_records_draws) {
  if (!step.token_id) return std::nullopt;
  if (s.mode == DecodeMode::greedy || s.temperature == 0) return step.logit_margin;  // T = 0 picks the argmax
  if (step.draw) {
    if (step.draw->rule != DrawRule::exponential_race) return std::nullopt;
    return s.temperature * step.draw->margin;
  }
  return run_records_draws ? std::nullopt : std::optional<double>(step.logit_margin);
}

// The recorded values of one step, equal bit for bit (doubles compared with ==: the writer stores
// every float32-derived value exactly, so equal bits read back equal).
bool same_candidates(const StepRecord& a, const StepRecord& b) {
  if (a.top.size() != b.top.size()) return false;
  for (std::size_t i = 0; i < a.top.size(); ++i)
    if (a.top[i].id != b.top[i].id || a.top[i].prob != b.top[i].prob || a.top[i].prob_scaled != b.top[i].prob_scaled ||
        a.top[i].text != b.top[i].text)
      return false;
  return true;
}

bool same_step(const StepRecord& a, const StepRecord& b) {
  return a.token_id == b.token_id && a.prob == b.prob && a.prob_t1 == b.prob_t1 && a.kept == b.kept && a.rest_mass == b.rest_mass &&
         a.margin == b.margin && a.logit_margin == b.logit_margin && a.entropy == b.entropy && same_candidates(a, b);
}

// The largest |difference| of the probabilities both steps record for the same token.
double prob_delta(const StepRecord& a, const StepRecord& b) {
  double d = std::max({std::fabs(a.prob - b.prob), std::fabs(a.prob_t1 - b.prob_t1), std::fabs(a.margin - b.margin)});
  for (const Candidate& x : a.top)
    for (const Candidate& y : b.top)
      if (x.id == y.id) d = std::max({d, std::fabs(x.prob - y.prob), std::fabs(x.prob_scaled - y.prob_scaled)});
  return d;
}

std::optional<int64_t> rank_of(const StepRecord& reference, const std::optional<int64_t>& token) {
  if (!token) return std::nullopt;
  for (std::size_t i = 0; i < reference.top.size(); ++i)
    if (reference.top[i].id == *token) return static_cast<int64_t>(i);
  return std::nullopt;
}

// Both runs carry digests by the same algorithm at every step they share (a run has them at
// every step or at none, but the reader does not make one run keep one algorithm): a digest of
// another algorithm is other bits of text, not other logits, so such a pair proves nothing.
bool digests_comparable(const std::vector<StepRecord>& a, const std::vector<StepRecord>& b) {
  const std::size_t shared = std::min(a.size(), b.size());
  if (shared == 0) return false;
  for (std::size_t k = 0; k < shared; ++k) {
    if (!a[k].logits_digest || !b[k].logits_digest) return false;
    const std::string& x = *a[k].logits_digest;
    const std::string& y = *b[k].logits_digest;
    if (logits_digest_algorithm(x) != logits_digest_algorithm(y) || x.size() != y.size()) return false;
  }
  return true;
}

RunVsReference compare_run(const RunRecord& ref, const RunRecord& cell) {
  RunVsReference r;
  const std::vector<StepRecord>& a = ref.result.steps;
  const std::vector<StepRecord>& b = cell.result.steps;
  bool exact = a.size() == b.size() && ref.result.stop_reason == cell.result.stop_reason;
  const bool digests = digests_comparable(a, b);
  bool logits_differ = false;
  const std::size_t shared = std::min(a.size(), b.size());
  for (std::size_t k = 0; k < shared; ++k) {
    if (a[k].token_id != b[k].token_id) {
      r.cls = CellClass::diverged;
      r.diverged_at = static_cast<int64_t>(k);
      r.reference_margin = a[k].margin;
      r.cell_margin = b[k].margin;
      r.reference_logit_margin = a[k].logit_margin;
      r.cell_logit_margin = b[k].logit_margin;
      r.rank_in_reference = rank_of(a[k], b[k].token_id);
      r.reference_draw = a[k].draw;
      r.cell_draw = b[k].draw;
      r.reference_decisive_margin = decisive_margin(ref, a[k]);
      r.cell_decisive_margin = decisive_margin(cell, b[k]);
      return r;
    }
    r.max_prob_delta = std::max(r.max_prob_delta, prob_delta(a[k], b[k]));
    r.max_logit_margin_delta = std::max(r.max_logit_margin_delta, std::fabs(a[k].logit_margin - b[k].logit_margin));
    exact = exact && same_step(a[k], b[k]);
    logits_differ = logits_differ || (digests && a[k].logits_digest != b[k].logits_digest);
  }
  if (a.size() != b.size()) {  // the same tokens, then one cell stopped and the other went on
    r.cls = CellClass::diverged;
    r.diverged_at = static_cast<int64_t>(shared);
    const StepRecord& last = shared < a.size() ? a[shared] : b[shared];
    r.reference_margin = r.cell_margin = last.margin;
    r.reference_logit_margin = r.cell_logit_margin = last.logit_margin;
    if (shared < a.size()) r.reference_draw = a[shared].draw;
    if (shared < b.size()) r.cell_draw = b[shared].draw;
    r.reference_decisive_margin = r.cell_decisive_margin =
        shared < a.size() ? decisive_margin(ref, a[shared]) : decisive_margin(cell, b[shared]);
    return r;
  }
  r.logits = !digests ? LogitsCheck::not_recorded : logits_differ ? LogitsCheck::differ : LogitsCheck::equal;
  r.cls = exact && !logits_differ ? CellClass::identical : CellClass::same_tokens;
  return r;
}

CellSummary summarize(const SensitivityMatrix& m, std::size_t c) {
  CellSummary s;
  std::size_t longest = 0, compared = 0;
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    const RunVsReference& r = m.runs[i][c];
    switch (r.cls) {
      case CellClass::identical:
        ++s.identical;
        s.identical_logits_equal += r.logits == LogitsCheck::equal;
        break;
      case CellClass::same_tokens: ++s.same_tokens; break;
      case CellClass::diverged: ++s.diverged; break;
      case CellClass::missing: ++s.missing; break;
    }
    if (r.cls != CellClass::missing) ++compared;
  }
  for (const RunRecord& run : m.cells[m.reference].evidence.evidence.runs) longest = std::max(longest, run.result.steps.size());
  for (std::size_t t = 0; t <= longest; ++t) {
    std::size_t agreeing = 0;
    for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
      const RunVsReference& r = m.runs[i][c];
      if (r.cls == CellClass::missing) continue;
      if (r.cls != CellClass::diverged || static_cast<int64_t>(t) <= r.diverged_at) ++agreeing;
    }
    s.survival.push_back(compared ? double(agreeing) / double(compared) : 0);
  }
  return s;
}

void attribute(SensitivityMatrix& m) {
  const std::map<std::string, std::string>& base = m.cells[m.reference].axes;
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    if (c == m.reference) continue;
    std::vector<std::string> changed;
    std::set<std::string> names;
    for (const auto& [k, v] : base) names.insert(k);
    for (const auto& [k, v] : m.cells[c].axes) names.insert(k);
    for (const std::string& k : names) {
      const std::map<std::string, std::string>& axes = m.cells[c].axes;
      const auto x = base.find(k);
      const auto y = axes.find(k);
      if (x == base.end() || y == axes.end() || x->second != y->second) changed.push_back(k);
    }
    if (changed.size() != 1) continue;
    AxisEffect e;
    e.axis = changed[0];
    const auto v = m.cells[c].axes.find(e.axis);
    e.value = v == m.cells[c].axes.end() ? "(unset)" : v->second;
    e.cell = m.cells[c].name;
    for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
      const CellClass cls = m.runs[i][c].cls;
      if (cls == CellClass::missing) continue;
      ++e.runs;
      e.same_tokens += cls == CellClass::same_tokens;
      e.diverged += cls == CellClass::diverged;
    }
    m.attribution.push_back(e);
  }
}

void predict(SensitivityMatrix& m) {
  MarginPredictor& p = m.predictor;
  std::vector<std::set<int64_t>> flip_steps(m.run_ids.size());
  for (std::size_t i = 0; i < m.run_ids.size(); ++i)
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
      const RunVsReference& r = m.runs[i][c];
      p.noise_floor = std::max(p.noise_floor, r.max_logit_margin_delta);
      if (r.cls != CellClass::diverged) continue;
      ++p.flips;
      flip_steps[i].insert(r.diverged_at);
      if (!r.reference_decisive_margin) {
        ++p.flips_not_judged;
        continue;
      }
      p.m_star = std::max(p.m_star.value_or(*r.reference_decisive_margin), *r.reference_decisive_margin);
    }
  const Evidence& ref = m.cells[m.reference].evidence.evidence;
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    const RunRecord& run = ref.runs[i];
    const bool draws = records_draws(run);
    for (const StepRecord& s : run.result.steps) {
      if (!s.token_id) continue;
      const std::optional<double> margin = step_decisive_margin(run.params.sampling, s, draws);
      if (!margin) {
        ++p.steps_not_judged;
        continue;
      }
      ++p.steps;
      const bool flagged = p.m_star && *margin <= *p.m_star;
      const bool flipped = flip_steps[i].count(s.step) > 0;
      p.flagged += flagged;
      p.flip_steps += flipped;
      p.flip_steps_flagged += flagged && flipped;
    }
  }
}

// The largest reference decisive margin at a flip of cell c; absent when c has no judged flip.
std::optional<double> cell_m_star(const SensitivityMatrix& m, std::size_t c) {
  std::optional<double> best;
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    const RunVsReference& r = m.runs[i][c];
    if (r.cls == CellClass::diverged && r.reference_decisive_margin)
      best = std::max(best.value_or(*r.reference_decisive_margin), *r.reference_decisive_margin);
  }
  return best;
}

HeldOutCell judge_held_out(const SensitivityMatrix& m, std::size_t c, const std::optional<double>& m_star) {
  HeldOutCell h;
  h.cell = m.cells[c].name;
  h.m_star = m_star;
  const auto flagged = [&](const std::optional<double>& margin) { return m_star && margin && *margin <= *m_star; };
  const Evidence& ref = m.cells[m.reference].evidence.evidence;
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    const RunVsReference& r = m.runs[i][c];
    if (r.cls == CellClass::missing) continue;
    const bool diverged = r.cls == CellClass::diverged;
    if (diverged) {
      ++h.flips;
      h.caught += flagged(r.reference_decisive_margin);
    }
    const bool draws = records_draws(ref.runs[i]);
    for (const StepRecord& s : ref.runs[i].result.steps) {
      if (diverged && s.step > r.diverged_at) break;
      if (!s.token_id) continue;
      const std::optional<double> margin = step_decisive_margin(ref.runs[i].params.sampling, s, draws);
      if (!margin) continue;
      ++h.steps;
      const bool f = flagged(margin);
      h.flagged += f;
      h.flagged_flips += f && diverged && s.step == r.diverged_at;
    }
  }
  return h;
}

void hold_out(SensitivityMatrix& m) {
  std::vector<std::optional<double>> per_cell(m.cells.size());
  for (std::size_t c = 0; c < m.cells.size(); ++c)
    if (c != m.reference) per_cell[c] = cell_m_star(m, c);
  HeldOutPredictor& h = m.held_out;
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    if (c == m.reference) continue;
    std::optional<double> fitted;
    for (std::size_t o = 0; o < m.cells.size(); ++o)
      if (o != c && per_cell[o]) fitted = std::max(fitted.value_or(*per_cell[o]), *per_cell[o]);
    HeldOutCell cell = judge_held_out(m, c, fitted);
    if (cell.steps == 0 && cell.flips == 0) continue;
    h.cells_with_flips += cell.flips > 0;
    h.flips += cell.flips;
    h.caught += cell.caught;
    h.cells.push_back(std::move(cell));
  }
}


// A Markdown cell holds no '|' and no line break.
std::string md(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? '/' : (c == '\n' ? ' ' : c);
  return out;
}

}  // namespace

std::string held_out_summary(const HeldOutPredictor& h) {
  std::ostringstream o;
  o << "Leave one cell out: m* fitted on every other cell's flips, \"margin <= m*\" judged on the cell left out. ";
  if (!h.enough()) {
    o << h.cells_with_flips << (h.cells_with_flips == 1 ? " cell has" : " cells have")
      << " flips: not enough cells to hold one out (it takes two, one to fit m* on and one to judge it).";
    return o.str();
  }
  o << "Over " << h.cells.size() << " held-out cells (" << h.cells_with_flips << " with flips) it caught " << h.caught << " of "
    << h.flips << " flips: held-out recall " << three_digits(*h.recall()) << ", against 1 on the cells it was fitted to.";
  return o.str();
}

std::string sensitivity_share_text(std::size_t part, std::size_t whole) {
  if (whole == 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * double(part) / double(whole));
  return buf;
}

std::string sensitivity_axes_text(const std::map<std::string, std::string>& axes) {
  std::string s;
  for (const auto& [k, v] : axes) s += (s.empty() ? "" : ", ") + k + "=" + v;
  return s.empty() ? "-" : s;
}

const char* to_string(LogitsCheck c) {
  switch (c) {
    case LogitsCheck::equal: return "equal";
    case LogitsCheck::differ: return "differ";
    case LogitsCheck::not_recorded: break;
  }
  return "not_recorded";
}

const char* to_string(CellClass c) {
  switch (c) {
    case CellClass::identical: return "identical";
    case CellClass::same_tokens: return "same_tokens";
    case CellClass::diverged: return "diverged";
    case CellClass::missing: return "missing";
  }
  return "?";
}

namespace {

// The copies of one run share everything but params.replica: their group is copy 0's id.
std::string group_id(const RunRecord& r) {
  RunParams p = r.params;
  p.replica = 0;
  return run_id(r.experiment, r.prompt_index, r.prompt, p);
}

std::string pairing_id(const SensitivityCell& cell, const RunRecord& r) {
  return cell.pair_ignoring_use_cache ? id_ignoring_use_cache(r) : r.id;
}

// Every group of two or more copies in the reference, and per cell the completions of the
// copies it holds (looked up as the matrix paired them).
void group_replicas(SensitivityMatrix& m, const std::vector<std::unordered_map<std::string, const RunRecord*>>& by_key) {
  std::map<std::string, std::size_t> index;  // group id -> position in m.replica_groups
  std::vector<std::vector<const RunRecord*>> members;
  for (const RunRecord& r : m.cells[m.reference].evidence.evidence.runs) {
    const auto [it, inserted] = index.emplace(group_id(r), members.size());
    if (inserted) members.emplace_back();
    members[it->second].push_back(&r);
  }
  std::vector<std::pair<std::size_t, std::string>> order;  // first member's position, group id
  for (const auto& [id, k] : index) order.emplace_back(k, id);
  std::sort(order.begin(), order.end());
  const auto has_copies = [](const std::vector<const RunRecord*>& runs) {
    return runs.size() >= 2 && std::any_of(runs.begin(), runs.end(), [](const RunRecord* r) { return r->params.replica > 0; });
  };
  for (const auto& [k, id] : order) {
    if (!has_copies(members[k])) continue;
    ReplicaGroup g;
    g.run = id;
    g.copies = members[k].size();
    const RunRecord* first = *std::min_element(members[k].begin(), members[k].end(), [](const RunRecord* a, const RunRecord* b) {
      return a->params.replica < b->params.replica;
    });
    const std::vector<int64_t>& reference_completion = first->result.output_ids;
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
      std::map<std::vector<int64_t>, std::size_t> completions;
      std::size_t present = 0, unlike = 0;
      for (const RunRecord* ref : members[k]) {
        const auto found = by_key[c].find(pairing_id(m.cells[c], *ref));
        if (found == by_key[c].end()) continue;
        ++present;
        ++completions[found->second->result.output_ids];
        unlike += found->second->result.output_ids != reference_completion;
      }
      std::size_t most = 0;
      for (const auto& [ids, n] : completions) most = std::max(most, n);
      g.present.push_back(present);
      g.distinct.push_back(completions.size());
      g.most_common.push_back(most);
      g.unlike_reference.push_back(unlike);
    }
    m.replica_groups.push_back(std::move(g));
  }
}

}  // namespace

std::string id_ignoring_use_cache(const RunRecord& r) {
  RunParams p = r.params;
  p.use_cache = false;
  return run_id(r.experiment, r.prompt_index, r.prompt, p);
}

std::optional<double> decisive_margin(const RunRecord& run, const StepRecord& step) {
  return step_decisive_margin(run.params.sampling, step, records_draws(run));
}

bool made_with_use_cache_forced(const Evidence& reference, const Evidence& cell) {
  if (cell.runs.empty()) return false;
  const bool forced = cell.runs.front().params.use_cache;
  for (const RunRecord& r : cell.runs)
    if (r.params.use_cache != forced) return false;
  const auto keys = [](const Evidence& e, bool ignoring) {
    std::set<std::string> k;
    for (const RunRecord& r : e.runs) k.insert(ignoring ? id_ignoring_use_cache(r) : r.id);
    return k.size() == e.runs.size() ? std::optional<std::set<std::string>>(k) : std::nullopt;
  };
  const auto ref_ids = keys(reference, false), ref_keys = keys(reference, true);
  const auto cell_ids = keys(cell, false), cell_keys = keys(cell, true);
  if (!ref_keys || !cell_keys) return false;
  const auto common = [](const std::set<std::string>& a, const std::set<std::string>& b) {
    std::size_t n = 0;
    for (const std::string& x : a) n += b.count(x);
    return n;
  };
  return common(*ref_keys, *cell_keys) > common(*ref_ids, *cell_ids);
}

namespace {

// Runs paired by pairing_id; a cell that holds two runs under one key (an experiment that varies
// use_cache itself, run with use_cache forced) cannot be paired and is refused by the caller.
std::vector<std::unordered_map<std::string, const RunRecord*>> runs_by_key(const std::vector<SensitivityCell>& cells) {
  std::vector<std::unordered_map<std::string, const RunRecord*>> by_key(cells.size());
  for (std::size_t c = 0; c < cells.size(); ++c)
    for (const RunRecord& r : cells[c].evidence.evidence.runs) by_key[c].emplace(pairing_id(cells[c], r), &r);
  return by_key;
}

}  // namespace

SensitivityMatrix build_sensitivity(std::vector<SensitivityCell> cells, std::size_t reference) {
  SensitivityMatrix m;
  m.cells = std::move(cells);
  m.reference = reference;
  const Evidence& ref = m.cells[reference].evidence.evidence;
  const std::vector<std::unordered_map<std::string, const RunRecord*>> by_key = runs_by_key(m.cells);
  for (const RunRecord& run : ref.runs) {
    m.run_ids.push_back(run.id);
    std::vector<RunVsReference> row(m.cells.size());
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
      const auto it = by_key[c].find(pairing_id(m.cells[c], run));
      if (it != by_key[c].end()) row[c] = compare_run(run, *it->second);
    }
    m.runs.push_back(std::move(row));
  }
  for (std::size_t c = 0; c < m.cells.size(); ++c) m.summaries.push_back(summarize(m, c));
  attribute(m);
  predict(m);
  hold_out(m);
  group_replicas(m, by_key);
  return m;
}

OrderedJson sensitivity_to_json(const SensitivityMatrix& m) {
  OrderedJson cells = OrderedJson::array();
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    const SensitivityCell& cell = m.cells[c];
    const CellSummary& s = m.summaries[c];
    OrderedJson axes = OrderedJson::object();
    for (const auto& [k, v] : cell.axes) axes[k] = v;
    const Evidence& e = cell.evidence.evidence;
    cells.push_back({{"name", cell.name},
                     {"axes", axes},
                     {"evidence", cell.evidence.path},
                     {"blas_core", e.environment.blas.core ? OrderedJson(*e.environment.blas.core) : OrderedJson(nullptr)},
                     {"cpu_kernels", e.numerics && e.numerics->kernels ? OrderedJson(to_string(e.numerics->kernels->setting)) : OrderedJson(nullptr)},
                     {"numerics", e.numerics ? to_string(e.numerics->mode) : "reference"},
                     {"reference", c == m.reference},
                     {"paired_by", cell.pair_ignoring_use_cache ? "id_ignoring_use_cache" : "id"},
                     {"runs", {{"identical", s.identical}, {"same_tokens", s.same_tokens}, {"diverged", s.diverged}, {"missing", s.missing},
                               {"identical_logits_equal", s.identical_logits_equal}}},
                     {"survival", s.survival}});
  }
  OrderedJson runs = OrderedJson::array();
  for (std::size_t i = 0; i < m.run_ids.size(); ++i) {
    OrderedJson per_cell = OrderedJson::object();
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
      const RunVsReference& r = m.runs[i][c];
      OrderedJson j = {{"class", to_string(r.cls)}};
      if (r.cls == CellClass::same_tokens || r.cls == CellClass::identical) {
        j["max_prob_delta"] = r.max_prob_delta;
        j["max_logit_margin_delta"] = r.max_logit_margin_delta;
        j["logits"] = to_string(r.logits);
      }
      if (r.cls == CellClass::diverged) {
        j["new_token"] = r.diverged_at + 1;
        j["reference_margin"] = r.reference_margin;
        j["cell_margin"] = r.cell_margin;
        j["reference_logit_margin"] = r.reference_logit_margin;
        j["cell_logit_margin"] = r.cell_logit_margin;
        j["rank_in_reference"] = r.rank_in_reference ? OrderedJson(*r.rank_in_reference) : OrderedJson(nullptr);
        const auto draw_json = [](const std::optional<DrawRecord>& d) {
          if (!d) return OrderedJson(nullptr);
          return OrderedJson{{"rule", to_string(d->rule)}, {"margin", d->margin}, {"runner_up", d->runner_up}};
        };
        j["reference_draw"] = draw_json(r.reference_draw);
        j["cell_draw"] = draw_json(r.cell_draw);
        const auto optional = [](const std::optional<double>& v) { return v ? OrderedJson(*v) : OrderedJson(nullptr); };
        j["reference_decisive_margin"] = optional(r.reference_decisive_margin);
        j["cell_decisive_margin"] = optional(r.cell_decisive_margin);
      }
      per_cell[m.cells[c].name] = j;
    }
    runs.push_back({{"id", m.run_ids[i]}, {"cells", per_cell}});
  }
  OrderedJson attribution = OrderedJson::array();
  for (const AxisEffect& a : m.attribution)
    attribution.push_back({{"axis", a.axis}, {"value", a.value}, {"cell", a.cell}, {"runs", a.runs},
                           {"same_tokens", a.same_tokens}, {"diverged", a.diverged}});
  const MarginPredictor& p = m.predictor;
  OrderedJson predictor = {{"flips", p.flips},
                           {"flips_not_judged", p.flips_not_judged},
                           {"steps_not_judged", p.steps_not_judged},
                           {"noise_floor_logit_margin", p.noise_floor},
                           {"m_star", p.m_star ? OrderedJson(*p.m_star) : OrderedJson(nullptr)},
                           {"steps", p.steps},
                           {"flagged", p.flagged},
                           {"flip_steps", p.flip_steps},
                           {"flip_steps_flagged", p.flip_steps_flagged},
                           {"precision", p.precision()},
                           {"recall", p.recall()},
                           {"share_flagged", p.share_flagged()}};
  const auto optional_number = [](const std::optional<double>& v) { return v ? OrderedJson(*v) : OrderedJson(nullptr); };
  const HeldOutPredictor& h = m.held_out;
  OrderedJson held_cells = OrderedJson::array();
  for (const HeldOutCell& c : h.cells)
    held_cells.push_back({{"cell", c.cell},
                          {"m_star", optional_number(c.m_star)},
                          {"flips", c.flips},
                          {"caught", c.caught},
                          {"recall", optional_number(c.recall())},
                          {"steps", c.steps},
                          {"flagged", c.flagged},
                          {"flagged_flips", c.flagged_flips},
                          {"precision", optional_number(c.precision())},
                          {"share_flagged", c.share_flagged()}});
  OrderedJson held_out = {{"cells_with_flips", h.cells_with_flips},
                          {"enough_cells", h.enough()},
                          {"flips", h.flips},
                          {"caught", h.caught},
                          {"recall", optional_number(h.recall())},
                          {"cells", held_cells}};
  OrderedJson groups = OrderedJson::array();
  for (const ReplicaGroup& g : m.replica_groups) {
    OrderedJson per_cell = OrderedJson::object();
    for (std::size_t c = 0; c < m.cells.size(); ++c)
      per_cell[m.cells[c].name] = {{"copies", g.present[c]},
                                   {"distinct_completions", g.distinct[c]},
                                   {"most_common", g.most_common[c]},
                                   {"unlike_reference", g.unlike_reference[c]}};
    groups.push_back({{"run", g.run}, {"copies", g.copies}, {"cells", per_cell}});
  }
  return {{"schema", "genrepro.sensitivity/1"},
          {"reference", m.cells[m.reference].name},
          {"cells", cells},
          {"attribution", attribution},
          {"predictor", predictor},
          {"held_out_predictor", held_out},
          {"replica_groups", groups},
          {"runs", runs}};
}

std::string replica_group_cell_text(const ReplicaGroup& g, std::size_t c) {
  if (g.present[c] == 0) return "-";
  std::string text = std::to_string(g.distinct[c]) + (g.distinct[c] == 1 ? " (all " : " (most common: ") +
                     std::to_string(g.most_common[c]) + " of " + std::to_string(g.present[c]);
  if (g.unlike_reference[c] > 0) text += "; " + std::to_string(g.unlike_reference[c]) + " unlike the reference's copy 0";
  return text + ")";
}

std::string replica_groups_markdown(const SensitivityMatrix& m) {
  std::ostringstream o;
  o << "\n## Identical runs, distinct completions\n\nCopies of one run (the experiment's `replicas`) can differ only through "
       "the arithmetic around them. Per cell: how many distinct completions the copies gave (1: every copy the same).\n\n| run (copy 0) | copies |";
  for (const SensitivityCell& c : m.cells) o << " " << md(c.name) << " |";
  o << "\n| --- | --- |";
  for (std::size_t c = 0; c < m.cells.size(); ++c) o << " --- |";
  o << "\n";
  for (const ReplicaGroup& g : m.replica_groups) {
    o << "| " << md(g.run) << " | " << g.copies << " |";
    for (std::size_t c = 0; c < m.cells.size(); ++c) o << " " << replica_group_cell_text(g, c) << " |";
    o << "\n";
  }
  return o.str();
}

std::string sensitivity_markdown(const SensitivityMatrix& m) {
  std::ostringstream o;
  const std::size_t n = m.run_ids.size();
  o << "# Numerics sensitivity\n\n"
    << n << " runs in " << m.cells.size() << " cells, each against the reference cell `" << md(m.cells[m.reference].name)
    << "`. identical: every recorded value equal bit for bit, and the full logits too where both cells recorded "
       "their digests (the column after it); same tokens: the same ids, some recorded value or the logits different; "
       "diverged: a different token at the new token named. (docs/sensitivity.md)\n\n"
    << "| cell | axes | BLAS kernel | identical | of which logits proven equal | same tokens | diverged | missing |\n"
    << "| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (std::size_t c = 0; c < m.cells.size(); ++c) {
    const CellSummary& s = m.summaries[c];
    const auto& core = m.cells[c].evidence.evidence.environment.blas.core;
    o << "| " << md(m.cells[c].name) << (c == m.reference ? " (reference)" : "") << " | " << md(sensitivity_axes_text(m.cells[c].axes)) << " | "
      << md(core ? *core : "-") << " | " << sensitivity_share_text(s.identical, n) << " | " << s.identical_logits_equal << " | "
      << sensitivity_share_text(s.same_tokens, n) << " | " << sensitivity_share_text(s.diverged, n) << " | " << s.missing << " |\n";
  }
  if (!m.attribution.empty()) {
    o << "\n## One factor at a time\n\n| axis | value | cell | runs | same tokens | diverged |\n| --- | --- | --- | --- | --- | --- |\n";
    for (const AxisEffect& a : m.attribution)
      o << "| " << md(a.axis) << " | " << md(a.value) << " | " << md(a.cell) << " | " << a.runs << " | " << a.same_tokens << " | "
        << a.diverged << " |\n";
  }
  const MarginPredictor& p = m.predictor;
  o << "\n## The margin that predicts a flip\n\n";
  if (!p.m_star) {
    o << "No run diverged in any cell: there is no flip to predict. The largest |Δ logit margin| on matched steps "
         "(the noise floor) was "
      << three_digits(p.noise_floor) << ".\n";
  } else {
    o << "- flips: " << p.flips << " (run, cell) divergences at " << p.flip_steps << " of the reference's " << p.steps << " steps\n"
      << "- noise floor (largest |Δ logit margin| on matched steps): " << three_digits(p.noise_floor) << "\n"
      << "- m* (the largest reference margin at a flip: the logit margin of a greedy step, temperature x draw margin of a "
         "sampled one): "
      << three_digits(*p.m_star) << "\n"
      << "- \"margin <= m*\" flags " << p.flagged << " steps (" << sensitivity_share_text(p.flagged, p.steps) << "): precision "
      << three_digits(p.precision()) << ", recall " << three_digits(p.recall()) << "\n"
      << (p.steps_not_judged ? "- " + std::to_string(p.steps_not_judged) +
                                   " reference steps not judged: no margin decides them in logits (llama.cpp's draws, a sampled step "
                                   "with one token left)\n"
                             : std::string())
      << "  (MarginGate, 2026, verifies only low-margin steps at a 15-50 % trigger rate; here the rule is fitted to "
         "these cells, so its recall is 1 by construction on them: judge it on cells it was not fitted to)\n";
  }
  o << "\n## The predictor on held-out cells\n\n" << held_out_summary(m.held_out) << "\n";
  if (m.held_out.enough()) {
    o << "\n| held-out cell | m* without it | flips | caught | recall | flagged steps | precision |\n"
         "| --- | --- | --- | --- | --- | --- | --- |\n";
    for (const HeldOutCell& c : m.held_out.cells)
      o << "| " << md(c.cell) << " | " << (c.m_star ? three_digits(*c.m_star) : "-") << " | " << c.flips << " | " << c.caught << " | "
        << (c.recall() ? three_digits(*c.recall()) : "-") << " | " << c.flagged << " of " << c.steps << " ("
        << sensitivity_share_text(c.flagged, c.steps) << ") | " << (c.precision() ? three_digits(*c.precision()) : "-") << " |\n";
  }
  if (!m.replica_groups.empty()) o << replica_groups_markdown(m);
  o << "\n## Runs\n\n= identical, ~ same tokens, kN diverged at new token N, ? missing\n\n| run |";
  for (const SensitivityCell& c : m.cells) o << " " << md(c.name) << " |";
  o << "\n| --- |";
  for (std::size_t c = 0; c < m.cells.size(); ++c) o << " --- |";
  o << "\n";
  for (std::size_t i = 0; i < n; ++i) {
    o << "| " << md(m.run_ids[i]) << " |";
    for (std::size_t c = 0; c < m.cells.size(); ++c) {
      const RunVsReference& r = m.runs[i][c];
      switch (r.cls) {
        case CellClass::identical: o << " = |"; break;
        case CellClass::same_tokens: o << " ~ |"; break;
        case CellClass::diverged: o << " k" << (r.diverged_at + 1) << " |"; break;
        case CellClass::missing: o << " ? |"; break;
      }
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace genrepro
