// One golden run against one new run: compare the steps up to the divergence, then decide the
// verdict by docs/diff.md's precedence. Both runs are typed evidence, checked when read.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <set>

#include "compare/diff_format.hpp"
#include "compare/evidence_diff.hpp"
#include "compare/compared_params.hpp"
#include "evidence/logits_digest.hpp"

namespace genrepro {

namespace {

// Parameter groups: which differences explain which kind of change (docs/diff.md), as the
// parameter table declares them (params/param_table.hpp, DiffGroup). Keys are compared_params'
// (compare/compared_params.hpp): a framework's keys are in every run.
using ParamGroup = bool (*)(const std::string& key);
// Shape the unfiltered distribution the step records (prob_scaled = softmax(logits / T)). No
// framework key does: penalties, biases and masks act on the chain's scores, after it.
bool shapes_model(const std::string& key) { return explains(key, kShapesModel); }
// The framework and every control of its chain (penalties, masks, min-p, typical, ...): whose
// rules, order and draw a run used. Each changes the chain, so the kept sets and the draw.
bool sets_chain(const std::string& key) { return explains(key, kSetsChain); }
bool sets_kept(const std::string& key) { return explains(key, kSetsKept); }
bool sets_sampler(const std::string& key) { return explains(key, kSetsSampler); }
bool sets_stop(const std::string& key) { return explains(key, kSetsStop); }
bool sets_listing(const std::string& key) { return explains(key, kSetsListing); }
bool any_param(const std::string&) { return true; }

bool is_greedy(const RunRecord& r) { return r.params.sampling.mode == DecodeMode::greedy; }
// Whether a greedy run's argmax is over the unfiltered distribution (prob_scaled). Hugging Face's
// greedy takes it over the processed scores (penalties, bans, masks), whose softmax the step
// records as its final distribution (top[].prob), so that is what its two tokens compete in.
bool picks_by_unfiltered(const RunRecord& r) { return is_greedy(r) && r.params.sampling.framework != Framework::hf; }

const Candidate* find(const std::vector<Candidate>& top, int64_t id) {
  for (const Candidate& c : top)
    if (c.id == id) return &c;
  return nullptr;
}

OrderedJson token_json(const std::optional<int64_t>& id) { return id ? OrderedJson(*id) : OrderedJson(); }

OrderedJson stop_json(const GenerationResult& g) { return {{"reason", to_string(g.stop_reason)}, {"step", g.stop_step}}; }

// The probability of `token` in a step, in the sense the run picks by: the article's greedy (and
// llama.cpp's) takes the argmax of the unfiltered distribution (prob_scaled); sampling draws from
// the final one, and Hugging Face's greedy takes the argmax of it (picks_by_unfiltered).
std::optional<double> token_prob(const StepRecord& s, bool by_unfiltered, std::optional<int64_t> token) {
  if (!token) return std::nullopt;
  const Candidate* c = find(s.top, *token);
  if (by_unfiltered) {
    if (c) return c->prob_scaled;
    return s.token_id == token ? std::optional<double>(s.prob_t1) : std::nullopt;
  }
  if (s.token_id == token) return s.prob;
  return c ? std::optional<double>(c->prob) : std::nullopt;
}

// What the step-by-step comparison found at one step.
struct StepFindings {
  bool model_beyond = false;  // unfiltered distribution (prob_scaled, margin, rest_mass, prob_t1) beyond tolerance
  bool final_beyond = false;  // distribution after the chain (top[].prob, prob, entropy) beyond tolerance
  bool kept_differs = false;
  bool token_differs = false;
  bool token_text_differs = false;
  bool step_index_differs = false;
  // A framework run's first stage whose kept count differs ("min_p"), with both counts; "the
  // stages differ" when the two steps list other stages. Empty: every stage kept the same.
  std::string stage_differs;
  std::pair<int64_t, int64_t> stage_kept{0, 0};
  double max_abs = 0;  // over every compared probability at this step (0: bit-identical)
  std::string worst_path;
  bool any() const {
    return model_beyond || final_beyond || kept_differs || token_differs || token_text_differs || step_index_differs;
  }
};

// What the comparison of a whole run found, for the verdict.
struct RunFindings {
  bool prompt_ids_differ = false;
  std::optional<std::size_t> first;  // first step with any difference
  StepFindings at_first;
  bool token_differs_at_divergence = false;  // both runs have a step there, with other tokens
  bool one_stopped_first = false;            // the same tokens, but one run has more of them
  bool stop_differs = false;
  bool outputs_differ = false;               // output_ids, text or continuation, when the steps agree
};

class RunComparer {
 public:
  RunComparer(const RunRecord& g, const RunRecord& n, double tol, RunDiff& out) : g_(g), n_(n), tol_(tol), out_(out) {}

  void compare() {
    out_.id = g_.id;
    compare_params();
    RunFindings found;
    found.prompt_ids_differ = g_.result.prompt_ids != n_.result.prompt_ids;
    if (found.prompt_ids_differ) add_exact("prompt_ids", OrderedJson(g_.result.prompt_ids), OrderedJson(n_.result.prompt_ids));
    const bool tokens_part = compare_steps(found);
    compare_outputs(tokens_part, found);
    classify(found);
  }

 private:
  const std::vector<StepRecord>& g_steps() const { return g_.result.steps; }
  const std::vector<StepRecord>& n_steps() const { return n_.result.steps; }

  // ----- steps -----

  // The first step whose token differs, or the shorter run's length.
  std::size_t divergent_step() const {
    const std::size_t common = std::min(g_steps().size(), n_steps().size());
    for (std::size_t k = 0; k < common; ++k)
      if (g_steps()[k].token_id != n_steps()[k].token_id) return k;
    return common;
  }

  // Compares steps up to and including the divergence (its context is still shared); after it
  // the contexts differ and nothing further is comparable. Returns whether the tokens part.
  bool compare_steps(RunFindings& found) {
    const std::size_t common = std::min(g_steps().size(), n_steps().size());
    const std::size_t d = divergent_step();
    const bool lengths_differ = g_steps().size() != n_steps().size();
    const bool tokens_part = d < common || lengths_differ;
    for (std::size_t k = 0; k < common && k <= d; ++k) {
      const StepFindings f = compare_step(k);
      if (!found.first && f.any()) {
        found.first = k;
        found.at_first = f;
      }
    }
    if (!found.first && tokens_part) found.first = d;  // one run stopped while the other went on
    if (found.first) out_.first_difference_step = static_cast<int64_t>(*found.first);
    if (tokens_part) out_.divergence = divergence_at(d);
    found.token_differs_at_divergence = d < common;
    found.one_stopped_first = lengths_differ && d == common;
    return tokens_part;
  }

  StepFindings compare_step(std::size_t k) {
    const StepRecord& gs = g_steps()[k];
    const StepRecord& ns = n_steps()[k];
    const std::string at = "steps[" + std::to_string(k) + "]";
    StepFindings f;
    const bool same_token = gs.token_id == ns.token_id;
    f.step_index_differs = exact_if_differs(at + ".step", OrderedJson(gs.step), OrderedJson(ns.step));
    if (!same_token) {
      f.token_differs = true;
      add_exact(at + ".token_id", token_json(gs.token_id), token_json(ns.token_id));
    } else if (gs.token_text != ns.token_text) {
      f.token_text_differs = true;
      add_exact(at + ".token_text", OrderedJson(gs.token_text), OrderedJson(ns.token_text));
    }
    f.kept_differs = exact_if_differs(at + ".kept", OrderedJson(gs.kept), OrderedJson(ns.kept));
    compare_stages(f, at, gs, ns);
    compare_candidates(f, at, gs, ns);
    if (gs.top.size() == ns.top.size()) f.model_beyond |= prob(f, at + ".rest_mass", gs.rest_mass, ns.rest_mass);
    f.model_beyond |= prob(f, at + ".margin", gs.margin, ns.margin);
    f.final_beyond |= prob(f, at + ".entropy", gs.entropy, ns.entropy);
    if (same_token) {
      f.model_beyond |= prob(f, at + ".prob_t1", gs.prob_t1, ns.prob_t1);
      f.final_beyond |= prob(f, at + ".prob", gs.prob, ns.prob);
    }
    return f;
  }

  // A framework run's chain, stage by stage: the same stages must keep the same
  // number of tokens. Stages named alike are compared by count; lists that name other stages
  // (another chain, which its params say) are one difference.
  void compare_stages(StepFindings& f, const std::string& at, const StepRecord& gs, const StepRecord& ns) {
    const auto names = [](const StepRecord& s) {
      std::vector<std::string> v;
      for (const StageKept& k : s.stages) v.push_back(k.stage);
      return v;
    };
    if (names(gs) != names(ns)) {
      const auto listing = [](const StepRecord& s) {
        OrderedJson j = OrderedJson::array();
        for (const StageKept& k : s.stages) j.push_back({{"stage", k.stage}, {"kept", k.kept}});
        return j;
      };
      f.kept_differs = true;
      if (f.stage_differs.empty()) f.stage_differs = "the stages differ";
      add_exact(at + ".stages", listing(gs), listing(ns));
      return;
    }
    for (std::size_t i = 0; i < gs.stages.size(); ++i) {
      const int64_t g = gs.stages[i].kept, n = ns.stages[i].kept;
      if (g == n) continue;
      f.kept_differs = true;
      if (f.stage_differs.empty()) {
        f.stage_differs = gs.stages[i].stage;
        f.stage_kept = {g, n};
      }
      add_exact(at + ".stages[" + std::to_string(i) + "].kept", OrderedJson(g), OrderedJson(n));
    }
  }

  // The unfiltered distribution (the model's own output at the run's temperature) and the final
  // one, candidate by candidate, matched by token id.
  void compare_candidates(StepFindings& f, const std::string& at, const StepRecord& gs, const StepRecord& ns) {
    for (const Candidate& gc : gs.top) {
      const std::string cp = at + ".top[id=" + std::to_string(gc.id) + "]";
      if (const Candidate* nc = find(ns.top, gc.id)) {
        f.model_beyond |= prob(f, cp + ".prob_scaled", gc.prob_scaled, nc->prob_scaled);
        f.final_beyond |= prob(f, cp + ".prob", gc.prob, nc->prob);
        // The same id read as other text is the decoder's change, and with max_new_tokens 0 the
        // candidates' texts are the only text a run records.
        if (gc.text != nc->text) {
          f.token_text_differs = true;
          add_exact(cp + ".text", OrderedJson(gc.text), OrderedJson(nc->text));
        }
      } else if (!absent_is_plausible(gc, ns.top)) {
        f.model_beyond = true;
        add_exact(cp, OrderedJson(gc.prob_scaled), OrderedJson());
      }
    }
    for (const Candidate& nc : ns.top)
      if (!find(gs.top, nc.id) && !absent_is_plausible(nc, gs.top)) {
        f.model_beyond = true;
        add_exact(at + ".top[id=" + std::to_string(nc.id) + "]", OrderedJson(), OrderedJson(nc.prob_scaled));
      }
  }

  // A candidate listed in one run but not the other is fine when it could simply have fallen
  // just below the other run's shortest listed candidate (a near-tie at the list's end, or a
  // shorter top_candidates).
  bool absent_is_plausible(const Candidate& c, const std::vector<Candidate>& other_top) const {
    if (other_top.empty()) return true;
    return c.prob_scaled <= other_top.back().prob_scaled + tol_;
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
    add({path, real_to_json(g), real_to_json(n), d});
    return true;
  }

  Divergence divergence_at(std::size_t d) const {
    Divergence v;
    v.step = static_cast<int64_t>(d);
    const StepRecord* gs = d < g_steps().size() ? &g_steps()[d] : nullptr;
    const StepRecord* ns = d < n_steps().size() ? &n_steps()[d] : nullptr;
    auto side = [&](const StepRecord* own) {
      TokenAtStep t;
      if (!own) return t;
      t.id = own->token_id;
      t.text = own->token_text;
      if (gs) t.prob_in_golden = token_prob(*gs, picks_by_unfiltered(g_), t.id);
      if (ns) t.prob_in_new = token_prob(*ns, picks_by_unfiltered(n_), t.id);
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

  // ----- run-level outputs: text and ids only matter when the steps did not already part -----

  void compare_outputs(bool tokens_part, RunFindings& found) {
    found.stop_differs = g_.result.stop_reason != n_.result.stop_reason || g_.result.stop_step != n_.result.stop_step;
    if (found.stop_differs) add_exact("stop", stop_json(g_.result), stop_json(n_.result));
    if (tokens_part) return;
    found.outputs_differ |= exact_if_differs("output_ids", OrderedJson(g_.result.output_ids), OrderedJson(n_.result.output_ids));
    found.outputs_differ |= exact_if_differs("text", OrderedJson(g_.text), OrderedJson(n_.text));
    found.outputs_differ |= exact_if_differs("continuation", OrderedJson(g_.continuation), OrderedJson(n_.continuation));
  }

  // ----- params, key by key, every key in both runs (compared_params: a framework's keys
  // hold their off value in a run of another framework) -----

  void compare_params() {
    const OrderedJson gp = compared_params(g_.params), np = compared_params(n_.params);
    for (auto it = gp.begin(); it != gp.end(); ++it) {
      const OrderedJson& nv = np.at(it.key());
      if (!same_value(it.value(), nv)) {
        out_.params.push_back({"params." + it.key(), it.value(), nv, numeric_diff(it.value(), nv)});
        differing_params_.insert(it.key());
      }
    }
    if (g_.prompt != n_.prompt) {
      out_.params.push_back({"prompt", OrderedJson(g_.prompt), OrderedJson(n_.prompt), std::nullopt});
      differing_params_.insert("prompt");
    }
  }

  static bool same_value(const OrderedJson& a, const OrderedJson& b) {
    if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
    return a == b;
  }
  static std::optional<double> numeric_diff(const OrderedJson& a, const OrderedJson& b) {
    if (a.is_number() && b.is_number()) return std::fabs(a.get<double>() - b.get<double>());
    return std::nullopt;
  }
  bool params_differ_in(ParamGroup group) const {
    return std::any_of(differing_params_.begin(), differing_params_.end(), [&](const std::string& k) { return group(k); });
  }
  // "; also top_k 0 -> 40": the differing params of `group`, after a list of others.
  std::string also_named(ParamGroup group) const {
    const std::string s = params_named(group);
    return s.empty() ? s : "; also " + s;
  }
  std::string params_named(ParamGroup group) const {
    std::string s;
    for (const ValueDifference& p : out_.params) {
      const std::string key = p.path.substr(p.path.find('.') + 1);
      if (!group(key)) continue;
      if (!s.empty()) s += ", ";
      s += key + " " + show_json(p.golden) + " -> " + show_json(p.current);
    }
    return s;
  }

  // ----- differing fields -----

  void add(ValueDifference d) {
    ++out_.field_difference_count;
    if (out_.fields.size() < kMaxListedFields) out_.fields.push_back(std::move(d));
  }
  void add_exact(const std::string& path, OrderedJson g, OrderedJson n) { add({path, std::move(g), std::move(n), std::nullopt}); }
  bool exact_if_differs(const std::string& path, OrderedJson g, OrderedJson n) {
    if (g == n) return false;
    add_exact(path, std::move(g), std::move(n));
    return true;
  }

  // ----- the verdict (precedence documented in docs/diff.md) -----

  // `cause`: the reason without the run's own numbers; empty when the reason has none.
  void set(Verdict v, std::string reason, std::string cause = {}) {
    out_.verdict = v;
    out_.cause = cause.empty() ? reason : std::move(cause);
    out_.reason = std::move(reason);
  }

  bool near_tie(const Divergence& d) const {
    auto close = [&](std::optional<double> a, std::optional<double> b) { return a && b && std::fabs(*a - *b) <= tol_; };
    return close(d.golden.prob_in_golden, d.current.prob_in_golden) || close(d.golden.prob_in_new, d.current.prob_in_new);
  }

  void classify(const RunFindings& r) {
    const bool any_output_difference = r.first || r.stop_differs || r.outputs_differ || r.prompt_ids_differ;
    if (!any_output_difference && differing_params_.empty()) return;  // agree
    const std::string step = r.first ? " at " + new_token_label(static_cast<int64_t>(*r.first)) : std::string();
    const StepFindings& at = r.at_first;
    if (differing_params_.count("prompt")) return set(Verdict::params_change, "the prompt differs: these are runs of different inputs");
    // Another engine computed the logits: every difference downstream is its forward pass's,
    // so it is named before any rule that would call a moved distribution a regression.
    if (differing_params_.count("engine"))
      return set(Verdict::params_change,
                 "the engine differs (" + params_named(any_param) + "): another forward pass computed the logits" +
                     (r.first ? "; the records differ from" + step : std::string("; every record agrees")),
                 "the engine differs: another forward pass computed the logits");
    if (!any_output_difference)
      return set(Verdict::params_change, "only parameters differ (" + params_named(any_param) + "); every output agrees");
    // 1. The model's own distribution moved and no parameter shapes it: a regression, even if
    //    it also flipped a near-tie.
    if (r.first && at.model_beyond && !params_differ_in(shapes_model))
      return set(Verdict::regression, "the model's distribution changed beyond tolerance" + step + " (max |dp| " +
                                          show_delta(at.max_abs) + " at " + at.worst_path + ") with the same temperature",
                 "the model's distribution changed beyond tolerance with the same temperature");
    if (r.prompt_ids_differ) return set(Verdict::regression, "the same prompt encodes to different ids: the tokenizer changed");
    // 2. Another framework or another control of its chain: its rules, order and draw, so its
    //    kept sets and tokens, are other ones. Named first, with whatever else differs.
    if (params_differ_in(sets_chain))
      return set(Verdict::sampler_change, "the sampler chain's parameters differ (" + params_named(sets_chain) +
                                              also_named([](const std::string& k) { return !sets_chain(k); }) + ")");
    // 3. The filter kept a different set.
    if (params_differ_in(sets_kept))
      return set(Verdict::kept_set_change, "the kept-set parameters differ (" + params_named(sets_kept) + ")");
    // 4. The sampler or its RNG was configured differently (this explains a kept set that
    //    differs too: temperature, order and rule move it).
    if (params_differ_in(sets_sampler))
      return set(Verdict::sampler_change, "the sampler/RNG parameters differ (" + params_named(sets_sampler) + ")");
    // 5. The same parameters and another kept set: a boundary moved.
    if (r.first && at.kept_differs) return classify_kept(at, step, *r.first);
    if (r.first && at.final_beyond)
      return set(Verdict::regression, "the sampler's final distribution changed beyond tolerance" + step + " (max |dp| " +
                                          show_delta(at.max_abs) + " at " + at.worst_path +
                                          ") with the same parameters and kept set",
                 "the sampler's final distribution changed beyond tolerance with the same parameters and kept set");
    // 6., 7. Same distribution (within tolerance), another token.
    if (r.first && r.token_differs_at_divergence && at.token_differs) return classify_other_token(at, step);
    // 8., 9. The same tokens, but the run stopped or read differently.
    if (r.one_stopped_first || r.stop_differs) {
      if (params_differ_in(sets_stop))
        return set(Verdict::params_change, "the stop parameters differ (" + params_named(sets_stop) + ")");
      return set(Verdict::regression, "the same tokens but a different stop" + step + " with the same stop parameters",
                 "the same tokens but a different stop with the same stop parameters");
    }
    if (r.first && at.token_text_differs)
      return set(Verdict::regression, "a token decodes to different text" + step + ": the decoder changed",
                 "a token decodes to different text: the decoder changed");
    if (r.outputs_differ) return set(Verdict::regression, "the same steps but different output ids or decoded text");
    if (params_differ_in(sets_listing))
      return set(Verdict::params_change, "the listing parameters differ (" + params_named(sets_listing) + ")");
    set(Verdict::regression, "the runs differ" + step + " with nothing in the parameters to explain it",
        "the runs differ with nothing in the parameters to explain it");
  }

  // The same parameters, another kept set at the first difference: a boundary token moved to the
  // other side of a stage's cut (near-tie at the nucleus edge). A framework run names the stage.
  void classify_kept(const StepFindings& at, const std::string& step, std::size_t k) {
    const std::string counts = std::to_string(g_steps()[k].kept) + " vs " + std::to_string(n_steps()[k].kept) + " tokens";
    if (at.stage_differs.empty())
      return set(Verdict::kept_set_change, "the kept set differs" + step + " (" + counts + ") with the same parameters: the top-p boundary moved",
                 "the kept set differs with the same parameters: the top-p boundary moved");
    if (at.stage_kept.first == at.stage_kept.second)  // other stage lists: the stages differ
      return set(Verdict::kept_set_change, "the kept set differs" + step + " (the stages differ; " + counts +
                                               " in the end) with the same parameters",
                 "the kept set differs with the same parameters: the stages differ");
    const std::string& stage = at.stage_differs;
    set(Verdict::kept_set_change,
        "the kept set differs" + step + " (stage " + stage + ": " + std::to_string(at.stage_kept.first) + " vs " +
            std::to_string(at.stage_kept.second) + " tokens; " + counts + " in the end) with the same parameters: the " + stage +
            " stage's boundary moved",
        "the kept set differs with the same parameters: the " + stage + " stage's boundary moved");
  }

  // A different token from a distribution that matches within the tolerance: a near-tie, or a
  // changed picker or draw.
  void classify_other_token(const StepFindings& at, const std::string& step) {
    const Divergence& d = *out_.divergence;
    // An identical computation cannot flip a sampled draw; only a different RNG can.
    const bool identical = at.max_abs == 0;
    if (near_tie(d) && (is_greedy(g_) || !identical))
      return set(Verdict::near_tie, "the two tokens were within tolerance " + show_delta(tol_) + " of each other" + step +
                                        "; a last-bit difference in the logits can flip them",
                 "the two tokens were within tolerance of each other; a last-bit difference in the logits can flip them");
    set(Verdict::sampler_change, std::string(identical ? "the same distribution (bit-identical)" : "the same distribution (within tolerance)") +
                                     " gave another token" + step + ": the " + (is_greedy(g_) ? "picker" : "draw") + " changed",
      std::string("the same distribution gave another token: the ") + (is_greedy(g_) ? "picker" : "draw") + " changed");
  }

  const RunRecord& g_;
  const RunRecord& n_;
  double tol_;
  RunDiff& out_;
  std::set<std::string> differing_params_;
};

// The logits digests step by step, apart from the comparison above (the gate's verdict
// stays tolerance-based). Both runs were checked when read: a run has digests at all its steps or
// at none.
void compare_logits_digests(const std::vector<StepRecord>& g, const std::vector<StepRecord>& n, RunDiff& out) {
  const auto has_digests = [](const std::vector<StepRecord>& steps) {
    return !steps.empty() && steps.front().logits_digest.has_value();
  };
  if (!has_digests(g) || !has_digests(n)) return;
  if (logits_digest_algorithm(*g.front().logits_digest) != logits_digest_algorithm(*n.front().logits_digest)) return;
  const std::size_t common = std::min(g.size(), n.size());
  for (std::size_t k = 0; k < common; ++k) {
    if (g[k].logits_digest == n[k].logits_digest) continue;
    out.logits_identical = false;
    out.logits_first_difference_step = static_cast<int64_t>(k);
    return;
  }
  out.logits_identical = g.size() == n.size();
  if (!*out.logits_identical) out.logits_first_difference_step = static_cast<int64_t>(common);
}

}  // namespace

RunDiff diff_run(const RunRecord& golden, const RunRecord& current, double prob_tolerance) {
  RunDiff out;
  RunComparer(golden, current, prob_tolerance, out).compare();
  compare_logits_digests(golden.result.steps, current.result.steps, out);
  return out;
}

}  // namespace genrepro
