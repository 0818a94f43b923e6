#include "evidence/evidence_diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "util/errors.hpp"
#include "evidence/evidence.hpp"
#include "util/json_text.hpp"
#include "evidence/run_record.hpp"
#include "spec/run_params.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;
using Json = EvidenceJson;

// An evidence file of 50 steps x a few hundred runs is a few MB; anything far larger is not
// evidence, and parsing it would allocate several times its size.
constexpr uint64_t kMaxEvidenceBytes = 512ull << 20;

const char* const kRegenerateHint = "regenerate it with 'genrepro run' (format: docs/evidence-format.md)";

// ---------- reading: every access names the file and the JSON path ----------

std::string describe(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return std::string("boolean ") + (j.get<bool>() ? "true" : "false");
    case Json::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > 40) s = s.substr(0, 40) + "...";
      return "string " + Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array of " + std::to_string(j.size());
    case Json::value_t::binary: return "binary data";
    case Json::value_t::discarded: return "nothing";
    default: return "number " + j.dump();
  }
}

[[noreturn]] void bad_field(const std::string& file, const std::string& path, const std::string& expected,
                            const Json* found) {
  throw EvidenceError(file + ": " + path + ": expected " + expected + ", found " +
                      (found ? describe(*found) : std::string("nothing (the key is missing)")) + "; " +
                      kRegenerateHint);
}

// Typed access into one evidence file; `path` is the JSON path of `obj`.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}
  const std::string& file() const { return file_; }

  const Json& get(const Json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) bad_field(file_, path, "an object", &obj);
    auto it = obj.find(key);
    if (it == obj.end()) bad_field(file_, join(path, key), "a value", nullptr);
    return *it;
  }
  const Json& object(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = get(obj, path, key);
    if (!v.is_object()) bad_field(file_, join(path, key), "an object", &v);
    return v;
  }
  const Json& array(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = get(obj, path, key);
    if (!v.is_array()) bad_field(file_, join(path, key), "an array", &v);
    return v;
  }
  double number(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = get(obj, path, key);
    if (v.is_number()) return v.get<double>();
    // evidence.cpp writes what JSON cannot hold as these strings.
    if (v == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (v == "Infinity") return std::numeric_limits<double>::infinity();
    if (v == "-Infinity") return -std::numeric_limits<double>::infinity();
    bad_field(file_, join(path, key), "a number (or \"NaN\", \"Infinity\", \"-Infinity\")", &v);
  }
  int64_t integer(const Json& obj, const std::string& path, const char* key) const {
    return integer_value(get(obj, path, key), join(path, key));
  }
  int64_t integer_value(const Json& v, const std::string& path) const {
    if (!v.is_number_integer()) bad_field(file_, path, "an integer", &v);
    return v.get<int64_t>();
  }
  std::optional<int64_t> integer_or_null(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = get(obj, path, key);
    if (v.is_null()) return std::nullopt;
    return integer_value(v, join(path, key));
  }
  std::string string(const Json& obj, const std::string& path, const char* key) const {
    const Json& v = get(obj, path, key);
    if (!v.is_string()) bad_field(file_, join(path, key), "a string", &v);
    return v.get<std::string>();
  }
  std::vector<int64_t> integers(const Json& obj, const std::string& path, const char* key) const {
    const Json& a = array(obj, path, key);
    std::vector<int64_t> out;
    out.reserve(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(integer_value(a[i], index(join(path, key), i)));
    return out;
  }

  static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  static std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

 private:
  const std::string& file_;
};

// One run, read with its fields checked (the ones diff compares).
struct RunView {
  std::string id;
  std::string file;
  std::string path;  // "runs[3]"
  const Json* params = nullptr;
  std::string prompt;
  std::string mode;  // params.mode: "greedy" | "sample"
  std::vector<int64_t> prompt_ids;
  std::vector<int64_t> output_ids;
  std::string text;
  std::string continuation;
  std::string stop_reason;
  int64_t stop_step = 0;
  std::vector<StepRecord> steps;
};

Candidate read_candidate(const Reader& r, const Json& j, const std::string& path) {
  Candidate c;
  c.id = r.integer(j, path, "id");
  c.text = r.string(j, path, "text");
  c.prob = r.number(j, path, "prob");
  c.prob_scaled = r.number(j, path, "prob_scaled");
  return c;
}

StepRecord read_step(const Reader& r, const Json& j, const std::string& path) {
  StepRecord s;
  s.step = r.integer(j, path, "step");
  s.token_id = r.integer_or_null(j, path, "token_id");
  s.token_text = s.token_id ? r.string(j, path, "token_text") : std::string();
  s.prob = r.number(j, path, "prob");
  s.prob_t1 = r.number(j, path, "prob_t1");
  s.kept = r.integer(j, path, "kept");
  const Json& top = r.array(j, path, "top");
  for (std::size_t i = 0; i < top.size(); ++i) s.top.push_back(read_candidate(r, top[i], Reader::index(path + ".top", i)));
  s.rest_mass = r.number(j, path, "rest_mass");
  s.margin = r.number(j, path, "margin");
  s.logit_margin = r.number(j, path, "logit_margin");
  s.entropy = r.number(j, path, "entropy");
  return s;
}

RunView read_run(const EvidenceFile& f, std::size_t index) {
  Reader r(f.path);
  RunView v;
  v.file = f.path;
  v.path = Reader::index("runs", index);
  const Json& j = f.doc["runs"][index];
  v.id = r.string(j, v.path, "id");
  v.params = &r.object(j, v.path, "params");
  v.mode = r.string(*v.params, v.path + ".params", "mode");
  v.prompt = r.string(j, v.path, "prompt");
  v.prompt_ids = r.integers(j, v.path, "prompt_ids");
  v.output_ids = r.integers(j, v.path, "output_ids");
  v.text = r.string(j, v.path, "text");
  v.continuation = r.string(j, v.path, "continuation");
  const Json& stop = r.object(j, v.path, "stop");
  v.stop_reason = r.string(stop, v.path + ".stop", "reason");
  v.stop_step = r.integer(stop, v.path + ".stop", "step");
  const Json& steps = r.array(j, v.path, "steps");
  for (std::size_t i = 0; i < steps.size(); ++i)
    v.steps.push_back(read_step(r, steps[i], Reader::index(v.path + ".steps", i)));
  return v;
}

std::string read_file_text(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw EvidenceError(path + ": no such file; give an evidence file written by 'genrepro run'");
  if (fs::is_directory(path, ec))
    throw EvidenceError(path + ": is a directory, expected an evidence file; give a file (only GOLDEN may be a directory)");
  std::string text, problem;
  if (!read_text_file(path, text, problem, kMaxEvidenceBytes)) throw EvidenceError(path + ": " + problem);
  return text;
}

// ---------- comparing ----------

// Parameter groups: which differences explain which kind of change (docs/diff.md).
bool in_group(const std::string& key, std::initializer_list<const char*> group) {
  return std::any_of(group.begin(), group.end(), [&](const char* g) { return key == g; });
}
// Shape the unfiltered distribution the step records (prob_scaled = softmax(logits / T)).
const std::initializer_list<const char*> kModelShapingParams = {"mode", "temperature"};
const std::initializer_list<const char*> kKeptSetParams = {"top_k", "top_p"};
const std::initializer_list<const char*> kSamplerParams = {"mode", "temperature", "seed", "rng", "sampler_order", "top_p_rule"};
const std::initializer_list<const char*> kStopParams = {"max_new_tokens", "stop_at_eos"};
const std::initializer_list<const char*> kListingParams = {"top_candidates"};

// What the step-by-step comparison found at one step.
struct StepFindings {
  bool model_beyond = false;  // unfiltered distribution (prob_scaled, margin, rest_mass, prob_t1) beyond tolerance
  bool final_beyond = false;  // distribution after the chain (top[].prob, prob, entropy) beyond tolerance
  bool kept_differs = false;
  bool token_differs = false;
  bool token_text_differs = false;
  bool step_index_differs = false;
  double max_abs = 0;  // over every compared probability at this step (0: bit-identical)
  std::string worst_path;
  bool any() const {
    return model_beyond || final_beyond || kept_differs || token_differs || token_text_differs || step_index_differs;
  }
};

class RunComparer {
 public:
  RunComparer(const RunView& g, const RunView& n, double tol, RunDiff& out) : g_(g), n_(n), tol_(tol), out_(out) {}

  void compare() {
    out_.id = g_.id;
    compare_params();
    const bool prompt_ids_differ = g_.prompt_ids != n_.prompt_ids;
    if (prompt_ids_differ) add_exact("prompt_ids", Json(g_.prompt_ids), Json(n_.prompt_ids));

    // The first step whose token differs, or where one run has no step left.
    const std::size_t common = std::min(g_.steps.size(), n_.steps.size());
    std::size_t d = common;
    for (std::size_t k = 0; k < common; ++k)
      if (g_.steps[k].token_id != n_.steps[k].token_id) {
        d = k;
        break;
      }
    const bool lengths_differ = g_.steps.size() != n_.steps.size();
    const bool tokens_part = d < common || lengths_differ;

    // Compare steps up to and including the divergence (its context is still shared); after
    // it the contexts differ and nothing further is comparable.
    std::optional<std::size_t> first;
    StepFindings at_first;
    for (std::size_t k = 0; k < common && k <= d; ++k) {
      StepFindings f = compare_step(k);
      if (!first && f.any()) {
        first = k;
        at_first = f;
      }
    }
    if (!first && tokens_part) first = d;  // one run stopped while the other went on
    if (first) out_.first_difference_step = static_cast<int64_t>(*first);
    if (tokens_part) out_.divergence = divergence_at(d);

    // Run-level outputs. Text and ids only matter when the steps did not already part.
    const bool stop_differs = g_.stop_reason != n_.stop_reason || g_.stop_step != n_.stop_step;
    if (stop_differs)
      add_exact("stop", Json{{"reason", g_.stop_reason}, {"step", g_.stop_step}},
                Json{{"reason", n_.stop_reason}, {"step", n_.stop_step}});
    bool outputs_differ = false;
    if (!tokens_part) {
      outputs_differ |= exact_if_differs("output_ids", Json(g_.output_ids), Json(n_.output_ids));
      outputs_differ |= exact_if_differs("text", Json(g_.text), Json(n_.text));
      outputs_differ |= exact_if_differs("continuation", Json(g_.continuation), Json(n_.continuation));
    }

    classify(prompt_ids_differ, first, at_first, d < common, lengths_differ && d == common, stop_differs, outputs_differ);
  }

 private:
  // ----- params -----
  void compare_params() {
    std::vector<std::string> keys;
    for (auto it = g_.params->begin(); it != g_.params->end(); ++it) keys.push_back(it.key());
    for (auto it = n_.params->begin(); it != n_.params->end(); ++it)
      if (!g_.params->contains(it.key())) keys.push_back(it.key());
    for (const std::string& key : keys) {
      const Json gv = g_.params->contains(key) ? g_.params->at(key) : Json();
      const Json nv = n_.params->contains(key) ? n_.params->at(key) : Json();
      if (!same_value(gv, nv)) {
        out_.params.push_back({"params." + key, gv, nv, numeric_diff(gv, nv)});
        differing_params_.insert(key);
      }
    }
    if (g_.prompt != n_.prompt) {
      out_.params.push_back({"prompt", Json(g_.prompt), Json(n_.prompt), std::nullopt});
      differing_params_.insert("prompt");
    }
  }

  static bool same_value(const Json& a, const Json& b) {
    if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
    return a == b;
  }
  static std::optional<double> numeric_diff(const Json& a, const Json& b) {
    if (a.is_number() && b.is_number()) return std::fabs(a.get<double>() - b.get<double>());
    return std::nullopt;
  }
  bool params_differ_in(std::initializer_list<const char*> group) const {
    return std::any_of(differing_params_.begin(), differing_params_.end(),
                       [&](const std::string& k) { return in_group(k, group); });
  }
  std::string params_named(std::initializer_list<const char*> group) const {
    std::string s;
    for (const ValueDifference& p : out_.params) {
      const std::string key = p.path.substr(p.path.find('.') + 1);
      if (!in_group(key, group)) continue;
      if (!s.empty()) s += ", ";
      s += key + " " + compact(p.golden) + " -> " + compact(p.current);
    }
    return s;
  }

  // ----- fields -----
  void add(ValueDifference d) {
    ++out_.field_difference_count;
    if (out_.fields.size() < kMaxListedFields) out_.fields.push_back(std::move(d));
  }
  void add_exact(const std::string& path, Json g, Json n) { add({path, std::move(g), std::move(n), std::nullopt}); }
  bool exact_if_differs(const std::string& path, Json g, Json n) {
    if (g == n) return false;
    add_exact(path, std::move(g), std::move(n));
    return true;
  }

  // Compares two probabilities; returns true when beyond tolerance (and lists it).
  bool prob(StepFindings& f, const std::string& path, double g, double n) {
    // Non-finite values agree only with the same value; against anything else they are as far
    // off as can be (a NaN must never pass as "within tolerance").
    const bool finite = std::isfinite(g) && std::isfinite(n);
    const bool same_special = !finite && ((std::isnan(g) && std::isnan(n)) || g == n);
    const double d = finite ? std::fabs(g - n) : same_special ? 0.0 : std::numeric_limits<double>::infinity();
    if (d > f.max_abs) {
      f.max_abs = d;
      f.worst_path = path;
    }
    out_.max_prob_difference = std::max(out_.max_prob_difference, d);
    if (d <= tol_) return false;
    add({path, Json(g), Json(n), d});
    return true;
  }

  static const Candidate* find(const std::vector<Candidate>& top, int64_t id) {
    for (const Candidate& c : top)
      if (c.id == id) return &c;
    return nullptr;
  }

  StepFindings compare_step(std::size_t k) {
    const StepRecord& gs = g_.steps[k];
    const StepRecord& ns = n_.steps[k];
    const std::string at = "steps[" + std::to_string(k) + "]";
    StepFindings f;
    const bool same_token = gs.token_id == ns.token_id;
    f.step_index_differs = exact_if_differs(at + ".step", Json(gs.step), Json(ns.step));
    if (!same_token) {
      f.token_differs = true;
      add_exact(at + ".token_id", gs.token_id ? Json(*gs.token_id) : Json(), ns.token_id ? Json(*ns.token_id) : Json());
    } else if (gs.token_text != ns.token_text) {
      f.token_text_differs = true;
      add_exact(at + ".token_text", Json(gs.token_text), Json(ns.token_text));
    }
    f.kept_differs = exact_if_differs(at + ".kept", Json(gs.kept), Json(ns.kept));

    // The unfiltered distribution: the model's own output at the run's temperature.
    for (const Candidate& gc : gs.top) {
      const std::string cp = at + ".top[id=" + std::to_string(gc.id) + "]";
      if (const Candidate* nc = find(ns.top, gc.id)) {
        f.model_beyond |= prob(f, cp + ".prob_scaled", gc.prob_scaled, nc->prob_scaled);
        f.final_beyond |= prob(f, cp + ".prob", gc.prob, nc->prob);
      } else if (!absent_is_plausible(gc, ns.top)) {
        f.model_beyond = true;
        add_exact(cp, Json(gc.prob_scaled), Json());
      }
    }
    for (const Candidate& nc : ns.top)
      if (!find(gs.top, nc.id) && !absent_is_plausible(nc, gs.top)) {
        f.model_beyond = true;
        add_exact(at + ".top[id=" + std::to_string(nc.id) + "]", Json(), Json(nc.prob_scaled));
      }
    if (gs.top.size() == ns.top.size()) f.model_beyond |= prob(f, at + ".rest_mass", gs.rest_mass, ns.rest_mass);
    f.model_beyond |= prob(f, at + ".margin", gs.margin, ns.margin);
    f.final_beyond |= prob(f, at + ".entropy", gs.entropy, ns.entropy);
    if (same_token) {
      f.model_beyond |= prob(f, at + ".prob_t1", gs.prob_t1, ns.prob_t1);
      f.final_beyond |= prob(f, at + ".prob", gs.prob, ns.prob);
    }
    return f;
  }

  // A candidate listed in one run but not the other is fine when it could simply have fallen
  // just below the other run's shortest listed candidate (a near-tie at the list's end, or a
  // shorter top_candidates).
  bool absent_is_plausible(const Candidate& c, const std::vector<Candidate>& other_top) const {
    if (other_top.empty()) return true;
    return c.prob_scaled <= other_top.back().prob_scaled + tol_;
  }

  // The probability of `token` in a step, in the sense the run's mode picks by: greedy takes
  // the argmax of the unfiltered distribution (prob_scaled); sampling draws from the final one.
  static std::optional<double> token_prob(const StepRecord& s, const std::string& mode, std::optional<int64_t> token) {
    if (!token) return std::nullopt;
    const Candidate* c = find(s.top, *token);
    if (mode == "greedy") {
      if (c) return c->prob_scaled;
      return s.token_id == token ? std::optional<double>(s.prob_t1) : std::nullopt;
    }
    if (s.token_id == token) return s.prob;
    return c ? std::optional<double>(c->prob) : std::nullopt;
  }

  Divergence divergence_at(std::size_t d) const {
    Divergence v;
    v.step = static_cast<int64_t>(d);
    const StepRecord* gs = d < g_.steps.size() ? &g_.steps[d] : nullptr;
    const StepRecord* ns = d < n_.steps.size() ? &n_.steps[d] : nullptr;
    auto side = [&](const StepRecord* own) {
      TokenAtStep t;
      if (!own) return t;
      t.id = own->token_id;
      t.text = own->token_text;
      if (gs) t.prob_in_golden = token_prob(*gs, g_.mode, t.id);
      if (ns) t.prob_in_new = token_prob(*ns, n_.mode, t.id);
      return t;
    };
    v.golden = side(gs);
    v.current = side(ns);
    if (gs) {
      v.golden_margin = gs->margin;
      v.golden_kept = gs->kept;
    }
    if (ns) {
      v.new_margin = ns->margin;
      v.new_kept = ns->kept;
    }
    return v;
  }

  bool near_tie(const Divergence& d) const {
    auto close = [&](std::optional<double> a, std::optional<double> b) { return a && b && std::fabs(*a - *b) <= tol_; };
    return close(d.golden.prob_in_golden, d.current.prob_in_golden) || close(d.golden.prob_in_new, d.current.prob_in_new);
  }

  // ----- the verdict (precedence documented in docs/diff.md) -----
  void set(Verdict v, std::string reason) {
    out_.verdict = v;
    out_.reason = std::move(reason);
  }

  void classify(bool prompt_ids_differ, std::optional<std::size_t> first, const StepFindings& at, bool tokens_differ_at_d,
                bool one_stopped_at_d, bool stop_differs, bool outputs_differ) {
    const bool any_output_difference = first || stop_differs || outputs_differ || prompt_ids_differ;
    if (!any_output_difference && differing_params_.empty()) return;  // agree
    const std::string step = first ? " at step " + std::to_string(*first) : std::string();
    if (differing_params_.count("prompt")) return set(Verdict::params_change, "the prompt differs: these are runs of different inputs");
    if (!any_output_difference)
      return set(Verdict::params_change, "only parameters differ (" + params_named({"mode", "temperature", "top_k", "top_p", "seed", "sampler_order", "top_p_rule", "rng", "max_new_tokens", "stop_at_eos", "use_cache", "top_candidates"}) + "); every output agrees");
    // 1. The model's own distribution moved and no parameter shapes it: a regression, even if
    //    it also flipped a near-tie.
    if (first && at.model_beyond && !params_differ_in(kModelShapingParams))
      return set(Verdict::regression, "the model's distribution changed beyond tolerance" + step + " (max |dp| " +
                                          fmt_delta(at.max_abs) + " at " + at.worst_path + ") with the same temperature");
    if (prompt_ids_differ) return set(Verdict::regression, "the same prompt encodes to different ids: the tokenizer changed");
    // 2. The filter kept a different set.
    if (params_differ_in(kKeptSetParams))
      return set(Verdict::kept_set_change, "the kept-set parameters differ (" + params_named(kKeptSetParams) + ")");
    if (first && at.kept_differs)
      return set(Verdict::kept_set_change, "the kept set differs" + step + " (" + std::to_string(g_.steps[*first].kept) + " vs " +
                                               std::to_string(n_.steps[*first].kept) +
                                               " tokens) with the same parameters: the top-p boundary moved");
    // 3. The sampler or its RNG was configured differently.
    if (params_differ_in(kSamplerParams))
      return set(Verdict::sampler_change, "the sampler/RNG parameters differ (" + params_named(kSamplerParams) + ")");
    if (first && at.final_beyond)
      return set(Verdict::regression, "the sampler's final distribution changed beyond tolerance" + step + " (max |dp| " +
                                          fmt_delta(at.max_abs) + " at " + at.worst_path +
                                          ") with the same parameters and kept set");
    // 4. Same distribution (within tolerance), another token.
    if (first && tokens_differ_at_d && at.token_differs) {
      const Divergence& d = *out_.divergence;
      // An identical computation cannot flip a sampled draw; only a different RNG can.
      const bool identical = at.max_abs == 0;
      if (near_tie(d) && (g_.mode == "greedy" || !identical))
        return set(Verdict::near_tie, "the two tokens were within tolerance " + fmt_delta(tol_) + " of each other" + step +
                                          "; a last-bit difference in the logits can flip them");
      return set(Verdict::sampler_change, std::string(identical ? "the same distribution (bit-identical)" : "the same distribution (within tolerance)") +
                                              " gave another token" + step + ": the " + (g_.mode == "greedy" ? "picker" : "draw") + " changed");
    }
    // 5. The same tokens, but the run stopped or read differently.
    if (one_stopped_at_d || stop_differs) {
      if (params_differ_in(kStopParams))
        return set(Verdict::params_change, "the stop parameters differ (" + params_named(kStopParams) + ")");
      return set(Verdict::regression, "the same tokens but a different stop" + step + " with the same stop parameters");
    }
    if (first && at.token_text_differs) return set(Verdict::regression, "a token decodes to different text" + step + ": the decoder changed");
    if (outputs_differ) return set(Verdict::regression, "the same steps but different output ids or decoded text");
    if (params_differ_in(kListingParams))
      return set(Verdict::params_change, "the listing parameters differ (" + params_named(kListingParams) + ")");
    set(Verdict::regression, "the runs differ" + step + " with nothing in the parameters to explain it");
  }

 public:
  static std::string compact(const Json& j) { return j.is_null() ? "(absent)" : j.dump(-1, ' ', false, Json::error_handler_t::replace); }
  static std::string fmt_delta(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2g", d);
    return buf;
  }

 private:
  const RunView& g_;
  const RunView& n_;
  double tol_;
  RunDiff& out_;
  std::set<std::string> differing_params_;
};

// ---------- environment and provenance ----------

void flatten(const Json& j, const std::string& path, std::vector<std::pair<std::string, const Json*>>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  out.emplace_back(path, &j);
}

bool is_volatile_path(const std::string& path) { return path == "environment.threads.runs_concurrently"; }

void compare_blocks(const Json& g, const Json& n, const std::string& prefix, const std::set<std::string>& skip,
                    std::vector<ValueDifference>& out) {
  std::vector<std::pair<std::string, const Json*>> gl, nl;
  if (g.is_object()) flatten(g, prefix, gl);
  if (n.is_object()) flatten(n, prefix, nl);
  std::map<std::string, const Json*> nmap(nl.begin(), nl.end());
  std::set<std::string> seen;
  auto skipped = [&](const std::string& p) { return is_volatile_path(p) || skip.count(p); };
  for (const auto& [path, gv] : gl) {
    seen.insert(path);
    if (skipped(path)) continue;
    auto it = nmap.find(path);
    const Json nv = it == nmap.end() ? Json() : *it->second;
    if (*gv != nv) out.push_back({path, *gv, nv, std::nullopt});
  }
  for (const auto& [path, nv] : nl)
    if (!seen.count(path) && !skipped(path)) out.push_back({path, Json(), *nv, std::nullopt});
}

void add_unique(std::vector<ValueDifference>& into, const std::vector<ValueDifference>& found) {
  for (const ValueDifference& d : found)
    if (std::none_of(into.begin(), into.end(), [&](const ValueDifference& e) { return e.path == d.path; })) into.push_back(d);
}

Json member_or_null(const Json& doc, const char* key) {
  auto it = doc.find(key);
  return it == doc.end() ? Json() : *it;
}

std::vector<ValueDifference> environment_differences(const Json& g, const Json& n) {
  std::vector<ValueDifference> out;
  compare_blocks(member_or_null(g, "environment"), member_or_null(n, "environment"), "environment", {}, out);
  return out;
}

std::vector<ValueDifference> provenance_differences(const Json& g, const Json& n) {
  std::vector<ValueDifference> out;
  compare_blocks(member_or_null(g, "genrepro"), member_or_null(n, "genrepro"), "genrepro", {}, out);
  // Where the model lives differs from machine to machine; what it is does not.
  compare_blocks(member_or_null(g, "model"), member_or_null(n, "model"), "model", {"model.path"}, out);
  return out;
}

std::string fmt_prob(std::optional<double> p) {
  if (!p) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *p);
  return buf;
}

std::string show_token(const TokenAtStep& t) {
  if (!t.id) return "(no token: the run had stopped)";
  return std::to_string(*t.id) + " " + Json(t.text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Long values (torch_config, loaded libraries) are summarized in text; --json keeps them whole.
std::string show_value(const Json& j) {
  constexpr std::size_t kMaxShown = 60;
  std::string s = RunComparer::compact(j);
  if (s.size() > kMaxShown) s = s.substr(0, kMaxShown) + "...(" + std::to_string(s.size()) + " chars)";
  return s;
}

Json value_difference_json(const ValueDifference& d) {
  Json j{{"path", d.path}, {"golden", d.golden}, {"new", d.current}};
  if (d.abs_diff) j["abs_diff"] = *d.abs_diff;
  return j;
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(); }
Json optional_json(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(); }

constexpr Verdict kDifferVerdicts[] = {Verdict::regression, Verdict::kept_set_change, Verdict::sampler_change,
                                       Verdict::params_change, Verdict::near_tie};

}  // namespace

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::agree: return "agree";
    case Verdict::regression: return "regression";
    case Verdict::kept_set_change: return "kept-set change";
    case Verdict::sampler_change: return "sampler/RNG change";
    case Verdict::params_change: return "parameter change";
    case Verdict::near_tie: return "near-tie";
  }
  return "?";
}

const char* json_name(Verdict v) {
  switch (v) {
    case Verdict::agree: return "agree";
    case Verdict::regression: return "regression";
    case Verdict::kept_set_change: return "kept_set_change";
    case Verdict::sampler_change: return "sampler_change";
    case Verdict::params_change: return "params_change";
    case Verdict::near_tie: return "near_tie";
  }
  return "?";
}

EvidenceFile load_evidence_json(const std::string& path) {
  EvidenceFile f;
  f.path = path;
  const std::string text = read_file_text(path);
  // The checked parser refuses what nlohmann would crash on or silently resolve (nesting deep
  // enough to overflow the stack, invalid UTF-8, duplicate keys); the document is then parsed
  // again keeping the writer's key order.
  const JsonParseOutcome checked = parse_json_text(text);
  if (!checked.ok()) throw EvidenceError(path + ": " + checked.problem + "; give an evidence file written by 'genrepro run'");
  f.doc = Json::parse(text);
  if (!f.doc.is_object() || !f.doc.contains("schema"))
    throw EvidenceError(path + ": not genrepro evidence (no top-level \"schema\" key); give an evidence file written by 'genrepro run'");
  const Json& schema = f.doc["schema"];
  if (!schema.is_string() || schema.get<std::string>() != kEvidenceSchema)
    throw EvidenceError(path + ": schema " + describe(schema) + ", this build reads \"" + kEvidenceSchema +
                        "\"; regenerate the evidence with this genrepro (or use the genrepro that wrote it)");
  Reader r(path);
  const Json& runs = r.array(f.doc, "", "runs");
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string at = Reader::index("runs", i);
    const std::string id = r.string(runs[i], at, "id");
    auto [it, fresh] = seen.emplace(id, i);
    if (!fresh)
      throw EvidenceError(path + ": run id \"" + id + "\" appears twice (runs[" + std::to_string(it->second) + "] and " + at +
                          "); ids must be unique — regenerate or merge the evidence with genrepro");
  }
  return f;
}

std::vector<EvidenceFile> load_golden(const std::string& file_or_dir) {
  std::error_code ec;
  if (!fs::is_directory(file_or_dir, ec)) return {load_evidence_json(file_or_dir)};
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(file_or_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > 5 && name.front() != '.' && e.path().extension() == ".json")
      names.push_back(e.path().string());
  }
  if (ec) throw EvidenceError(file_or_dir + ": cannot list the golden directory (" + ec.message() + ")");
  if (names.empty())
    throw EvidenceError(file_or_dir + ": golden directory holds no *.json evidence files; bless some with 'genrepro bless EVIDENCE --into " +
                        file_or_dir + "'");
  std::sort(names.begin(), names.end());
  std::vector<EvidenceFile> files;
  std::map<std::string, std::string> owner;  // run id -> file
  for (const std::string& name : names) {
    files.push_back(load_evidence_json(name));
    for (const Json& run : files.back().doc["runs"]) {
      const std::string id = run["id"].get<std::string>();
      auto [it, fresh] = owner.emplace(id, name);
      if (!fresh)
        throw EvidenceError(name + ": run id \"" + id + "\" is also in " + it->second +
                            "; golden files must not overlap — remove the stale file (bless writes one file per experiment)");
    }
  }
  return files;
}

std::size_t EvidenceDiff::differing() const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [](const RunDiff& r) { return r.verdict != Verdict::agree; }));
}

std::size_t EvidenceDiff::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [v](const RunDiff& r) { return r.verdict == v; }));
}

EvidenceDiff diff_evidence(const std::vector<EvidenceFile>& golden, const EvidenceFile& current, const EvidenceDiffOptions& options) {
  if (!std::isfinite(options.prob_tolerance) || options.prob_tolerance < 0)
    throw UsageError("--prob-tolerance " + RunComparer::fmt_delta(options.prob_tolerance) +
                     ": must be a finite number >= 0 (default " + RunComparer::fmt_delta(kDefaultProbTolerance) + ")");
  EvidenceDiff diff;
  diff.prob_tolerance = options.prob_tolerance;
  diff.evidence_file = current.path;

  std::map<std::string, std::size_t> new_index;
  const Json& new_runs = current.doc["runs"];
  for (std::size_t i = 0; i < new_runs.size(); ++i) new_index.emplace(new_runs[i]["id"].get<std::string>(), i);

  std::set<std::string> golden_ids;
  for (const EvidenceFile& g : golden) {
    diff.golden_files.push_back(g.path);
    add_unique(diff.environment, environment_differences(g.doc, current.doc));
    add_unique(diff.provenance, provenance_differences(g.doc, current.doc));
    const Json& runs = g.doc["runs"];
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::string id = runs[i]["id"].get<std::string>();
      golden_ids.insert(id);
      auto it = new_index.find(id);
      if (it == new_index.end()) {
        diff.missing.push_back(id);
        continue;
      }
      const RunView gv = read_run(g, i);
      const RunView nv = read_run(current, it->second);
      RunDiff rd;
      RunComparer(gv, nv, options.prob_tolerance, rd).compare();
      diff.runs.push_back(std::move(rd));
    }
  }
  for (const Json& run : new_runs) {
    const std::string id = run["id"].get<std::string>();
    if (!golden_ids.count(id)) diff.extra.push_back(id);
  }
  return diff;
}

EvidenceDiff diff_cache_equivalence(const EvidenceFile& recompute, const EvidenceFile& cached, const EvidenceDiffOptions& options) {
  const Json& a = recompute.doc["runs"];
  const Json& b = cached.doc["runs"];
  if (a.size() != b.size())
    throw EvidenceError(cached.path + ": " + std::to_string(b.size()) + " runs with the KV cache but " + std::to_string(a.size()) +
                        " with recompute (" + recompute.path + "); both must run the same experiments");
  EvidenceFile paired{cached.path, cached.doc};
  for (std::size_t i = 0; i < a.size(); ++i) {
    Json& run = paired.doc["runs"][i];
    run["id"] = a[i]["id"];
    if (run.contains("params") && run["params"].is_object() && a[i].contains("params") && a[i]["params"].contains("use_cache"))
      run["params"]["use_cache"] = a[i]["params"]["use_cache"];
  }
  return diff_evidence({recompute}, paired, options);
}

bool tokens_equivalent(const EvidenceDiff& diff) {
  return diff.missing.empty() && diff.extra.empty() &&
         std::none_of(diff.runs.begin(), diff.runs.end(), [](const RunDiff& r) { return r.divergence.has_value(); });
}

std::string diff_summary_line(const EvidenceDiff& diff) {
  std::string s = "diff: " + std::to_string(diff.runs.size()) + " runs compared, " +
                  std::to_string(diff.runs.size() - diff.differing()) + " agree, " + std::to_string(diff.differing()) + " differ";
  std::string kinds;
  for (Verdict v : kDifferVerdicts)
    if (std::size_t c = diff.count(v)) kinds += (kinds.empty() ? "" : ", ") + std::to_string(c) + " " + to_string(v);
  if (!kinds.empty()) s += " (" + kinds + ")";
  s += "; " + std::to_string(diff.missing.size()) + " missing, " + std::to_string(diff.extra.size()) + " extra";
  s += "; prob tolerance " + RunComparer::fmt_delta(diff.prob_tolerance);
  return s;
}

std::string format_diff_text(const EvidenceDiff& diff) {
  std::ostringstream o;
  for (const RunDiff& r : diff.runs) {
    if (r.verdict == Verdict::agree) continue;
    o << "run " << r.id << ": " << to_string(r.verdict);
    if (r.divergence) o << " at step " << r.divergence->step;
    else if (r.first_difference_step) o << " at step " << *r.first_difference_step;
    o << "\n  why: " << r.reason << "\n";
    if (r.divergence) {
      const Divergence& d = *r.divergence;
      o << "  golden token: " << show_token(d.golden) << "  p(golden) " << fmt_prob(d.golden.prob_in_golden) << "  p(new) "
        << fmt_prob(d.golden.prob_in_new) << "\n";
      o << "  new token:    " << show_token(d.current) << "  p(golden) " << fmt_prob(d.current.prob_in_golden) << "  p(new) "
        << fmt_prob(d.current.prob_in_new) << "\n";
      o << "  margin (best - second): golden " << fmt_prob(d.golden_margin) << ", new " << fmt_prob(d.new_margin)
        << "; kept: golden " << (d.golden_kept ? std::to_string(*d.golden_kept) : "-") << ", new "
        << (d.new_kept ? std::to_string(*d.new_kept) : "-") << "\n";
    }
    for (const ValueDifference& p : r.params) o << "  param " << p.path << ": " << show_value(p.golden) << " -> " << show_value(p.current) << "\n";
    if (!r.fields.empty()) {
      o << "  differences (" << r.field_difference_count << (r.field_difference_count > r.fields.size() ? ", first listed" : "") << "):\n";
      for (const ValueDifference& f : r.fields) {
        o << "    " << f.path << ": " << show_value(f.golden) << " -> " << show_value(f.current);
        if (f.abs_diff) o << " (|d| " << RunComparer::fmt_delta(*f.abs_diff) << ")";
        o << "\n";
      }
    }
  }
  for (const std::string& id : diff.missing) o << "missing run " << id << ": in golden, not in the new evidence\n";
  for (const std::string& id : diff.extra) o << "extra run " << id << ": in the new evidence, not in golden\n";
  if (!diff.environment.empty()) {
    o << "environment differs (likely causes, not failures):\n";
    for (const ValueDifference& e : diff.environment) o << "  " << e.path << ": " << show_value(e.golden) << " -> " << show_value(e.current) << "\n";
  }
  if (!diff.provenance.empty()) {
    o << "provenance differs (build, model files; not failures):\n";
    for (const ValueDifference& e : diff.provenance) o << "  " << e.path << ": " << show_value(e.golden) << " -> " << show_value(e.current) << "\n";
  }
  o << diff_summary_line(diff) << "\n";
  return o.str();
}

EvidenceJson diff_to_json(const EvidenceDiff& diff) {
  Json verdicts = Json::object();
  for (Verdict v : kDifferVerdicts) verdicts[json_name(v)] = diff.count(v);
  Json runs = Json::array();
  for (const RunDiff& r : diff.runs) {
    Json j{{"id", r.id}, {"verdict", json_name(r.verdict)}, {"reason", r.reason},
           {"first_difference_step", optional_json(r.first_difference_step)}};
    if (r.divergence) {
      const Divergence& d = *r.divergence;
      auto side = [](const TokenAtStep& t) {
        return Json{{"token_id", optional_json(t.id)}, {"text", t.text},
                    {"prob_in_golden", optional_json(t.prob_in_golden)}, {"prob_in_new", optional_json(t.prob_in_new)}};
      };
      j["divergence"] = Json{{"step", d.step}, {"golden", side(d.golden)}, {"new", side(d.current)},
                             {"margin", {{"golden", optional_json(d.golden_margin)}, {"new", optional_json(d.new_margin)}}},
                             {"kept", {{"golden", optional_json(d.golden_kept)}, {"new", optional_json(d.new_kept)}}}};
    } else {
      j["divergence"] = nullptr;
    }
    j["params"] = Json::array();
    for (const ValueDifference& p : r.params) j["params"].push_back(value_difference_json(p));
    j["differences"] = Json::array();
    for (const ValueDifference& f : r.fields) j["differences"].push_back(value_difference_json(f));
    j["difference_count"] = r.field_difference_count;
    j["max_prob_difference"] = r.max_prob_difference;
    runs.push_back(std::move(j));
  }
  Json env = Json::array(), prov = Json::array();
  for (const ValueDifference& e : diff.environment) env.push_back(value_difference_json(e));
  for (const ValueDifference& e : diff.provenance) prov.push_back(value_difference_json(e));
  return Json{{"schema", "genrepro.diff/1"},
              {"agree", diff.agree()},
              {"prob_tolerance", diff.prob_tolerance},
              {"golden", diff.golden_files},
              {"evidence", diff.evidence_file},
              {"summary",
               {{"compared", diff.runs.size()},
                {"agree", diff.runs.size() - diff.differing()},
                {"differ", diff.differing()},
                {"missing", diff.missing.size()},
                {"extra", diff.extra.size()},
                {"verdicts", verdicts}}},
              {"runs", runs},
              {"missing", diff.missing},
              {"extra", diff.extra},
              {"environment", env},
              {"provenance", prov}};
}

}  // namespace genrepro
