#include "compare/fragility.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "compare/sensitivity.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/significant_digits.hpp"

namespace genrepro {

namespace {

constexpr const char* kSensitivitySchema = "genrepro.sensitivity/1";

// The reader of one sensitivity.json: every error names the file and the JSON path.
class MatrixReader {
 public:
  explicit MatrixReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw EvidenceError(path_ + ": " + where + ": " + what +
                        "; give the sensitivity.json that `genrepro sensitivity --out DIR` wrote (docs/sensitivity.md)");
  }

  const OrderedJson& member(const OrderedJson& object, const std::string& where, const char* key) const {
    if (!object.contains(key)) fail(where.empty() ? key : where + "." + key, "missing");
    return object[key];
  }

  const OrderedJson& array_at(const OrderedJson& object, const std::string& where, const char* key) const {
    const OrderedJson& v = member(object, where, key);
    if (!v.is_array()) fail(where.empty() ? key : where + "." + key, std::string("is ") + v.type_name() + ", expected an array");
    return v;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string number_text_of(double v) { return OrderedJson(v).dump(); }

const StepRecord* step_at(const RunRecord& run, int64_t step) {
  const auto& steps = run.result.steps;
  return step >= 0 && step < static_cast<int64_t>(steps.size()) ? &steps[static_cast<size_t>(step)] : nullptr;
}

const RunRecord* find_run(const std::vector<const RunRecord*>& runs, const std::string& id) {
  for (const RunRecord* r : runs)
    if (r->id == id) return r;
  return nullptr;
}

std::string why_of(const RunFragility& f, const FragilityKnowledge& k) {
  const std::optional<double>& decisive = f.golden_decisive_margin;
  std::string margin = std::string(f.by_draw ? "temperature x draw margin " : "logit margin ") +
                       (decisive ? three_digits(*decisive) : std::string("unknown"));
  if (k.m_star)
    margin += (decisive && *decisive <= *k.m_star ? " <= m* " : " > m* ") + three_digits(*k.m_star);
  else
    margin += " (the matrix saw no flip, so it has no m*)";
  const std::string flipped = f.flipped_cells.empty()
                                  ? "no cell of the matrix flipped it there"
                                  : "flipped there in " + std::to_string(f.flipped_cells.size()) + " of " +
                                        std::to_string(k.compared_cells) + " cells";
  return margin + "; " + flipped;
}

}  // namespace

const char* to_string(FragilityLabel l) { return l == FragilityLabel::known_fragile ? "known-fragile" : "unexpected"; }
const char* json_name(FragilityLabel l) { return l == FragilityLabel::known_fragile ? "known_fragile" : "unexpected"; }

FragilityKnowledge read_fragility(const std::string& path) {
  const MatrixReader r(path);
  const BoundedRead read = read_bounded(path, kMaxEvidenceBytes);
  if (!read.ok()) throw EvidenceError(path + ": " + read.problem + "; give the sensitivity.json of `genrepro sensitivity`");
  ParsedJson<OrderedJson> parsed = parse_ordered_json_text(read.text);
  if (!parsed.ok()) throw EvidenceError(path + ": " + parsed.problem + " (not a sensitivity.json genrepro wrote)");
  const OrderedJson& root = parsed.value;
  if (!root.is_object()) r.fail("the document", std::string("is ") + root.type_name() + ", expected an object");
  const OrderedJson& schema = r.member(root, "", "schema");
  if (schema != kSensitivitySchema)
    r.fail("schema", "is " + schema.dump() + ", expected \"" + kSensitivitySchema + "\"");

  FragilityKnowledge k;
  k.path = path;
  const OrderedJson& cells = r.array_at(root, "", "cells");
  if (cells.empty()) r.fail("cells", "is empty, expected the matrix's cells");
  const OrderedJson& predictor = r.member(root, "", "predictor");
  if (!predictor.is_object()) r.fail("predictor", "expected an object");
  const OrderedJson& m_star = r.member(predictor, "predictor", "m_star");
  if (m_star.is_number()) {
    const double v = m_star.get<double>();
    if (!std::isfinite(v) || v < 0) r.fail("predictor.m_star", "is " + m_star.dump() + ", expected a margin >= 0 or null");
    k.m_star = v;
  } else if (!m_star.is_null()) {
    r.fail("predictor.m_star", std::string("is ") + m_star.type_name() + ", expected a number or null");
  }
  const std::string reference = r.member(root, "", "reference").is_string() ? root["reference"].get<std::string>() : "";
  if (reference.empty()) r.fail("reference", "expected the reference cell's name");
  k.compared_cells = cells.size() - 1;

  const OrderedJson& runs = r.array_at(root, "", "runs");
  std::optional<double> supported;  // the largest reference decisive margin at a flip
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string at = "runs[" + std::to_string(i) + "]";
    const OrderedJson& run = runs[i];
    if (!run.is_object()) r.fail(at, "expected an object {\"id\": ..., \"cells\": {...}}");
    const OrderedJson& id = r.member(run, at, "id");
    if (!id.is_string() || id.get<std::string>().empty()) r.fail(at + ".id", "expected a run id");
    const OrderedJson& per_cell = r.member(run, at, "cells");
    if (!per_cell.is_object()) r.fail(at + ".cells", "expected an object of cells");
    auto& flips = k.flips[id.get<std::string>()];
    for (const auto& [cell, result] : per_cell.items()) {
      const std::string cell_at = at + ".cells." + cell;
      if (!result.is_object() || !result.contains("class") || !result["class"].is_string())
        r.fail(cell_at, "expected an object with a \"class\"");
      const std::string cls = result["class"].get<std::string>();
      if (cls != "identical" && cls != "same_tokens" && cls != "diverged" && cls != "missing")
        r.fail(cell_at + ".class", "is \"" + cls + "\"; allowed: identical, same_tokens, diverged, missing");
      if (cls != "diverged") continue;
      if (cell == reference) r.fail(cell_at + ".class", "is \"diverged\" in the reference cell, which every run agrees with by definition");
      const OrderedJson& token = r.member(result, cell_at, "new_token");
      if (!token.is_number_integer() || token.get<int64_t>() < 1)
        r.fail(cell_at + ".new_token", "is " + token.dump() + ", expected an integer >= 1");
      flips[token.get<int64_t>()].push_back(cell);
      if (result.contains("reference_decisive_margin") && !result["reference_decisive_margin"].is_null()) {
        const OrderedJson& margin = result["reference_decisive_margin"];
        if (!margin.is_number() || !std::isfinite(margin.get<double>()) || margin.get<double>() < 0)
          r.fail(cell_at + ".reference_decisive_margin", "is " + short_value(margin.dump(), 60) + ", expected a margin >= 0 or null");
        supported = std::max(supported.value_or(margin.get<double>()), margin.get<double>());
      }
    }
  }
  // m* is what the flips say, never more: a larger one would call unexpected divergences known-fragile.
  if (k.m_star != supported) {
    if (!supported)
      r.fail("predictor.m_star", "is " + three_digits(*k.m_star) +
                                     ", but no flip in runs[] has a reference_decisive_margin to support it; allowed: null");
    r.fail("predictor.m_star", "is " + (k.m_star ? three_digits(*k.m_star) : std::string("null")) + "; allowed: " +
                                   number_text_of(*supported) +
                                   " (the largest runs[].cells.*.reference_decisive_margin at a flip, which is what m* is)");
  }
  k.known_runs = runs.size();
  return k;
}

std::vector<RunFragility> label_divergences(const EvidenceDiff& d, const std::vector<EvidenceFile>& golden,
                                            const EvidenceFile& current, const FragilityKnowledge& k) {
  std::vector<const RunRecord*> golden_runs, new_runs;
  for (const EvidenceFile& f : golden)
    for (const RunRecord& r : f.evidence.runs) golden_runs.push_back(&r);
  for (const RunRecord& r : current.evidence.runs) new_runs.push_back(&r);

  std::vector<RunFragility> out;
  for (const RunDiff& run : d.runs) {
    if (run.verdict == Verdict::agree || !run.divergence) continue;
    RunFragility f;
    f.id = run.id;
    const int64_t step = run.divergence->step;
    f.new_token = step + 1;
    if (const RunRecord* g = find_run(golden_runs, run.id))
      if (const StepRecord* s = step_at(*g, step)) {
        f.golden_logit_margin = s->logit_margin;
        f.golden_decisive_margin = decisive_margin(*g, *s);
        f.by_draw = s->draw.has_value() && g->params.sampling.mode == DecodeMode::sample;
      }
    if (const RunRecord* n = find_run(new_runs, run.id))
      if (const StepRecord* s = step_at(*n, step)) f.new_logit_margin = s->logit_margin;
    const auto known = k.flips.find(run.id);
    if (known != k.flips.end()) {
      const auto at = known->second.find(f.new_token);
      if (at != known->second.end()) f.flipped_cells = at->second;
    }
    const bool below_m_star = k.m_star && f.golden_decisive_margin && *f.golden_decisive_margin <= *k.m_star;
    f.label = !f.flipped_cells.empty() || below_m_star ? FragilityLabel::known_fragile : FragilityLabel::unexpected;
    f.why = why_of(f, k);
    out.push_back(std::move(f));
  }
  return out;
}

bool only_known_fragile(const EvidenceDiff& d, const std::vector<RunFragility>& labels) {
  if (!d.missing.empty() || !d.extra.empty() || !d.pairs.empty()) return false;
  std::size_t fragile = 0;
  for (const RunFragility& f : labels)
    if (f.label == FragilityLabel::known_fragile) ++fragile;
  // A differing run without a token divergence (probabilities, text, stop) is not a flip.
  return fragile == labels.size() && labels.size() == d.differing();
}

std::string format_fragility_text(const FragilityKnowledge& k, const std::vector<RunFragility>& labels) {
  std::ostringstream o;
  o << "fragility (" << k.path << ": " << k.compared_cells << " cells against its reference, " << k.known_runs
    << " runs, m* " << (k.m_star ? three_digits(*k.m_star) : std::string("none")) << "):\n";
  if (labels.empty()) o << "  no run's tokens diverged: nothing to label\n";
  for (const RunFragility& f : labels)
    o << "  " << f.id << ": new token " << f.new_token << ": " << to_string(f.label) << " (" << f.why << ")\n";
  return o.str();
}

OrderedJson fragility_to_json(const FragilityKnowledge& k, const std::vector<RunFragility>& labels) {
  OrderedJson runs = OrderedJson::array();
  for (const RunFragility& f : labels) {
    runs.push_back({{"id", f.id},
                    {"new_token", f.new_token},
                    {"label", json_name(f.label)},
                    {"golden_logit_margin", f.golden_logit_margin ? OrderedJson(*f.golden_logit_margin) : OrderedJson(nullptr)},
                    {"new_logit_margin", f.new_logit_margin ? OrderedJson(*f.new_logit_margin) : OrderedJson(nullptr)},
                    {"golden_decisive_margin", f.golden_decisive_margin ? OrderedJson(*f.golden_decisive_margin) : OrderedJson(nullptr)},
                    {"flipped_cells", f.flipped_cells},
                    {"why", f.why}});
  }
  return {{"sensitivity", k.path},
          {"compared_cells", k.compared_cells},
          {"m_star", k.m_star ? OrderedJson(*k.m_star) : OrderedJson(nullptr)},
          {"runs", runs}};
}

}  // namespace genrepro
