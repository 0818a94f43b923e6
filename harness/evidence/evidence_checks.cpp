// Reading evidence, third stage: what the values mean and what must hold between fields, checked
// once on typed values so that no verb re-checks it (docs/validation.md lists every rule). Each
// rule is what the writer guarantees (engine/generation_loop.cpp, engine/step_evidence.cpp and
// engine/runner.cpp make it so); a file breaking one was edited or damaged, and a diff of it
// would say "agree" or "differ" about data that is not there. One function per rule, each naming
// the file and JSON path of the first violation, the value found and what is allowed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>

#include "evidence/evidence.hpp"
#include "evidence/json_number.hpp"
#include "evidence/logits_digest.hpp"
#include "params/sampling_params.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// Σ top.prob_scaled is a sum of float32 probabilities taken in double, so rest_mass = 1 - Σ can
// come out a little below 0 (-1.9e-8 in golden/fixture); and a float32 entropy can exceed
// log(V) by rounding. Far larger than any rounding (which is ~1e-7 here), far smaller than any
// edit a person would make.
constexpr double kRoundingSlack = 1e-4;
// A vocabulary bigger than this is not a language model's (GPT-2 has 50,257; the largest in use
// are ~256k); it also keeps every id comparison far from int64 overflow.
constexpr int64_t kMaxVocabSize = int64_t(1) << 24;

[[noreturn]] void violated(const std::string& file, const std::string& path, const std::string& what) {
  throw EvidenceError(file + ": " + path + ": " + what + "; " + kRegenerateEvidenceHint);
}

std::string show(const std::optional<int64_t>& id) { return id ? std::to_string(*id) : "null"; }

std::string show(double v) { return json_number(v); }

std::string item(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

// What the per-run rules need from the rest of the file.
struct Context {
  const std::string& file;
  int64_t vocab_size;  // model.config.vocab_size
  int64_t eos_token_id;
};

// ---- the file as a whole ----

// Token ids are checked against the vocabulary of the model that made them, which the evidence
// records in model.config (config.json as read; the writer always has vocab_size there).
int64_t vocab_size_of(const ModelInfo& m, const std::string& file) {
  const std::string path = "model.config.vocab_size";
  if (!m.config.is_object() || !m.config.contains("vocab_size"))
    violated(file, path, "missing; allowed: an integer from 1 to " + std::to_string(kMaxVocabSize) +
                             " (the model's config.json as the run read it)");
  const nlohmann::json& v = m.config["vocab_size"];
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(kMaxVocabSize)) ||
      v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxVocabSize)
    violated(file, path, "found " + v.dump() + "; allowed: an integer from 1 to " + std::to_string(kMaxVocabSize));
  return v.get<int64_t>();
}

void one_of(const std::string& file, const std::string& path, const std::string& value,
            const std::set<std::string>& allowed) {
  if (allowed.count(value) != 0) return;
  std::string names;
  for (const std::string& a : allowed) names += (names.empty() ? "\"" : ", \"") + a + "\"";
  violated(file, path, "found " + nlohmann::json(value).dump() + "; allowed: one of " + names);
}

// The names the writer uses (engine/runner.cpp, evidence/environment.cpp); anything else was typed in.
void model_is_described(const ModelInfo& m, const Context& c) {
  one_of(c.file, "model.source", m.source, {"fixture", "hf-dir", "hf-cache", "env"});
  if (m.eos_token_id < 0 || m.eos_token_id >= c.vocab_size)
    violated(c.file, "model.eos_token_id",
             "found " + std::to_string(m.eos_token_id) + "; allowed: a token id from 0 to " + std::to_string(c.vocab_size - 1));
  if (m.n_positions < 1)
    violated(c.file, "model.n_positions", "found " + std::to_string(m.n_positions) + "; allowed: an integer >= 1");
}

void environment_is_described(const Environment& env, const std::string& file) {
  one_of(file, "environment.blas.vendor", env.blas.vendor, {"openblas", "mkl", "blis", "reference", "unknown", "none"});
  one_of(file, "environment.dtype", env.dtype, {"float32"});
  one_of(file, "environment.device", env.device, {"cpu"});
  if (env.float_control)
    one_of(file, "environment.float_control.rounding", env.float_control->rounding, {"nearest", "down", "up", "toward_zero"});
  const auto at_least_one = [&](int n, const char* path) {
    if (n < 1) violated(file, path, "found " + std::to_string(n) + "; allowed: an integer >= 1");
  };
  at_least_one(env.threads.intra_op, "environment.threads.intra_op");
  at_least_one(env.threads.inter_op, "environment.threads.inter_op");
  if (env.threads.runs_concurrently) at_least_one(*env.threads.runs_concurrently, "environment.threads.runs_concurrently");
}

// Run ids name runs everywhere (diff matches by them, bless files them, merge slots them).
void ids_are_unique(const Evidence& e, const std::string& file) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const auto [it, fresh] = seen.emplace(e.runs[i].id, i);
    if (!fresh)
      throw EvidenceError(file + ": run id \"" + e.runs[i].id + "\" appears twice (runs[" + std::to_string(it->second) +
                          "] and runs[" + std::to_string(i) +
                          "]); ids must be unique — regenerate or merge the evidence with genrepro");
  }
}

// ---- one run ----

// The parameters a run was made with are those an experiment file may ask for (sampling_params.cpp
// holds the rules, so evidence and experiments accept exactly the same values).
void params_are_allowed(const RunRecord& r, const Context& c, const std::string& at) {
  const std::vector<ParamProblem> problems = check_run_params(r.params);
  if (problems.empty()) return;
  const ParamProblem& p = problems.front();
  violated(c.file, at + ".params." + p.field, "found " + p.value + "; allowed: " + p.allowed);
}

void positions_are_counted(const RunRecord& r, const Context& c, const std::string& at) {
  if (r.index < 0) violated(c.file, at + ".index", "found " + std::to_string(r.index) + "; allowed: an integer >= 0");
  if (r.prompt_index < 0)
    violated(c.file, at + ".prompt_index", "found " + std::to_string(r.prompt_index) + "; allowed: an integer >= 0");
}

void token_id_in_vocabulary(int64_t id, const Context& c, const std::string& path) {
  if (id < 0 || id >= c.vocab_size)
    violated(c.file, path,
             "found " + std::to_string(id) + "; allowed: a token id from 0 to " + std::to_string(c.vocab_size - 1) +
                 " (model.config.vocab_size is " + std::to_string(c.vocab_size) + ")");
}

void ids_are_in_vocabulary(const RunRecord& r, const Context& c, const std::string& at) {
  for (std::size_t i = 0; i < r.result.prompt_ids.size(); ++i) token_id_in_vocabulary(r.result.prompt_ids[i], c, item(at + ".prompt_ids", i));
  for (std::size_t i = 0; i < r.result.output_ids.size(); ++i) token_id_in_vocabulary(r.result.output_ids[i], c, item(at + ".output_ids", i));
}

// The loop refuses an empty prompt: there is nothing to predict from.
void prompt_is_not_empty(const RunRecord& r, const std::string& file, const std::string& at) {
  if (r.result.prompt_ids.empty()) violated(file, at + ".prompt_ids", "found an empty array; allowed: at least 1 token");
}

// steps[k].step == k.
void steps_are_numbered_in_order(const RunRecord& r, const std::string& file, const std::string& at) {
  const std::vector<StepRecord>& steps = r.result.steps;
  for (std::size_t k = 0; k < steps.size(); ++k)
    if (steps[k].step != static_cast<int64_t>(k))
      violated(file, at + ".steps[" + std::to_string(k) + "].step",
               "found " + std::to_string(steps[k].step) + "; allowed: " + std::to_string(k) +
                   " (steps are numbered 0, 1, 2, ... in order)");
}

// One step per output id, holding that id; or, when max_new_tokens is 0, the first prediction
// alone: one step, no token, no output ids.
void steps_are_the_output_ids(const RunRecord& r, const std::string& file, const std::string& at) {
  const GenerationResult& g = r.result;
  const bool first_prediction = r.params.max_new_tokens == 0;
  const std::size_t expected_steps = first_prediction ? 1 : g.output_ids.size();
  if (g.steps.size() != expected_steps || (first_prediction && !g.output_ids.empty()))
    violated(file, at + ".steps",
             "holds " + std::to_string(g.steps.size()) + " steps for " + std::to_string(g.output_ids.size()) +
                 " output ids; allowed: one step per output id (one step and no ids when max_new_tokens is 0)");
  for (std::size_t k = 0; k < g.steps.size(); ++k) {
    const std::optional<int64_t> expected = first_prediction ? std::nullopt : std::optional<int64_t>(g.output_ids[k]);
    if (g.steps[k].token_id != expected)
      violated(file, at + ".steps[" + std::to_string(k) + "].token_id",
               "found " + show(g.steps[k].token_id) + "; allowed: " +
                   (expected ? "output_ids[" + std::to_string(k) + "] = " + std::to_string(*expected) : std::string("null (max_new_tokens is 0)")));
  }
}

// The loop never makes more tokens than asked for.
void output_within_the_cap(const RunRecord& r, const std::string& file, const std::string& at) {
  const auto made = static_cast<int64_t>(r.result.output_ids.size());
  if (made > r.params.max_new_tokens)
    violated(file, at + ".output_ids",
             "holds " + std::to_string(made) + " ids; allowed: at most params.max_new_tokens = " +
                 std::to_string(r.params.max_new_tokens));
}

// stop.step counts the new tokens when the loop stopped.
void stop_step_counts_the_output(const RunRecord& r, const std::string& file, const std::string& at) {
  const int64_t made = static_cast<int64_t>(r.result.output_ids.size());
  if (r.result.stop_step != made)
    violated(file, at + ".stop.step",
             "found " + std::to_string(r.result.stop_step) + "; allowed: " + std::to_string(made) + ", the number of output ids");
}

// The reason says what the output shows: EOS ends it (and only when stop_at_eos), the cap fills it.
void stop_reason_fits_the_output(const RunRecord& r, const Context& c, const std::string& at) {
  const GenerationResult& g = r.result;
  const auto made = static_cast<int64_t>(g.output_ids.size());
  const std::string path = at + ".stop.reason";
  if (g.stop_reason == StopReason::eos) {
    if (!r.params.stop_at_eos) violated(c.file, path, "found \"eos\"; allowed: not \"eos\" when params.stop_at_eos is false");
    if (g.output_ids.empty() || g.output_ids.back() != c.eos_token_id)
      violated(c.file, path,
               "found \"eos\" but the last output id is " + (g.output_ids.empty() ? std::string("missing") : std::to_string(g.output_ids.back())) +
                   "; allowed: \"eos\" only when the last output id is model.eos_token_id = " + std::to_string(c.eos_token_id));
  }
  if (g.stop_reason == StopReason::max_new_tokens && made != r.params.max_new_tokens)
    violated(c.file, path,
             "found \"max_new_tokens\" after " + std::to_string(made) + " tokens; allowed: \"max_new_tokens\" only after params.max_new_tokens = " +
                 std::to_string(r.params.max_new_tokens) + " tokens");
}

// A step's candidate list names each token once (the writer takes the top N of one distribution);
// diff pairs candidates by id, so a repeated id would make a file disagree with itself (found by
// fuzz/evidence_fuzz.cpp).
void candidates_are_distinct(const RunRecord& r, const std::string& file, const std::string& at) {
  for (std::size_t k = 0; k < r.result.steps.size(); ++k) {
    std::map<int64_t, std::size_t> seen;
    const auto& top = r.result.steps[k].top;
    for (std::size_t c = 0; c < top.size(); ++c) {
      const auto [it, inserted] = seen.emplace(top[c].id, c);
      if (!inserted)
        violated(file, at + ".steps[" + std::to_string(k) + "].top[" + std::to_string(c) + "].id",
                 "found " + std::to_string(top[c].id) + ", already top[" + std::to_string(it->second) +
                     "]; allowed: each token once in a step's candidates");
    }
  }
}

// ---- one step ----

void real_in(double v, double lo, double hi, const Context& c, const std::string& path, const std::string& what) {
  if (!(std::isfinite(v) && v >= lo && v <= hi)) violated(c.file, path, "found " + show(v) + "; allowed: " + what);
}

void probability(double v, const Context& c, const std::string& path) {
  real_in(v, 0, 1, c, path, "a probability from 0 to 1");
}

// A list emptied or cut short would leave diff nothing to compare and let it say "agree".
void candidates_are_all_there(const StepRecord& s, const RunRecord& r, const Context& c, const std::string& at) {
  const auto expected = static_cast<std::size_t>(std::min(r.params.top_candidates, c.vocab_size));
  if (s.top.size() != expected)
    violated(c.file, at + ".top",
             "holds " + std::to_string(s.top.size()) + " candidates; allowed: exactly " + std::to_string(expected) +
                 " (params.top_candidates = " + std::to_string(r.params.top_candidates) + ", at most model.config.vocab_size)");
  for (std::size_t i = 0; i < s.top.size(); ++i) {
    const std::string path = item(at + ".top", i);
    token_id_in_vocabulary(s.top[i].id, c, path + ".id");
    probability(s.top[i].prob, c, path + ".prob");
    probability(s.top[i].prob_scaled, c, path + ".prob_scaled");
  }
}

// kept counts tokens with non-zero probability: at least the one picked, at most all of them;
// greedy keeps exactly one.
void kept_is_a_count(const StepRecord& s, const RunRecord& r, const Context& c, const std::string& at) {
  if (s.kept < 1 || s.kept > c.vocab_size)
    violated(c.file, at + ".kept",
             "found " + std::to_string(s.kept) + "; allowed: an integer from 1 to " + std::to_string(c.vocab_size) +
                 " (model.config.vocab_size)");
  if (r.params.sampling.mode == DecodeMode::greedy && s.kept != 1)
    violated(c.file, at + ".kept", "found " + std::to_string(s.kept) + "; allowed: 1 (params.mode is \"greedy\")");
}

void step_values_are_in_range(const StepRecord& s, const Context& c, const std::string& at) {
  probability(s.prob, c, at + ".prob");
  probability(s.prob_t1, c, at + ".prob_t1");
  real_in(s.rest_mass, -kRoundingSlack, 1, c, at + ".rest_mass", "a number from 0 to 1 (1 - the candidates' prob_scaled)");
  real_in(s.margin, -kRoundingSlack, 1, c, at + ".margin", "a number from 0 to 1 (a difference of two probabilities, best first)");
  real_in(s.logit_margin, 0, std::numeric_limits<double>::max(), c, at + ".logit_margin",
          "a finite number >= 0 (best logit minus the second best)");
  const double max_entropy = std::log(static_cast<double>(c.vocab_size)) + kRoundingSlack;
  real_in(s.entropy, 0, max_entropy, c, at + ".entropy",
          "a number from 0 to log(vocab_size) = " + show(max_entropy) + " nats");
}

// A draw record names a token that could have won instead (in the vocabulary, not the
// one chosen, beside a chosen token: a first prediction draws nothing) and a finite margin >= 0;
// inverse_cdf's is a share of the mass, at most 1. (That the runner-up had a chance is a relation
// to kept and the candidates: evidence_consistency.cpp.)
void draw_is_in_range(const StepRecord& s, const Context& c, const std::string& at) {
  if (!s.draw) return;
  const std::string path = at + ".draw";
  if (!s.token_id) violated(c.file, path, "present; allowed: none at a step with token_id null (a first prediction draws nothing)");
  token_id_in_vocabulary(s.draw->runner_up, c, path + ".runner_up");
  if (s.draw->runner_up == *s.token_id)
    violated(c.file, path + ".runner_up",
             "found " + std::to_string(s.draw->runner_up) + "; allowed: a token other than token_id " + std::to_string(*s.token_id) +
                 " (the token that would have been drawn instead)");
  if (s.draw->rule == DrawRule::inverse_cdf)
    real_in(s.draw->margin, 0, 1, c, path + ".margin", "a number from 0 to 1 (rule inverse_cdf: a share of the total mass)");
  else
    real_in(s.draw->margin, 0, std::numeric_limits<double>::max(), c, path + ".margin",
            "a finite number >= 0 (rule exponential_race: ln of the best ratio over the second best)");
}

// A logits digest names its algorithm and has its length; and a run records one at every step
// or at none (the writer records them all; a run with some would let diff call logits identical
// on the steps that kept theirs).
void logits_digests_are_well_formed(const RunRecord& r, const Context& c, const std::string& at) {
  const auto& steps = r.result.steps;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::string path = item(at + ".steps", k) + ".logits_digest";
    if (steps[k].logits_digest) {
      const std::string problem = logits_digest_problem(*steps[k].logits_digest);
      if (!problem.empty()) violated(c.file, path, "found " + nlohmann::json(*steps[k].logits_digest).dump() + "; allowed: " + problem);
    }
    if (k > 0 && steps[k].logits_digest.has_value() != steps[0].logits_digest.has_value())
      violated(c.file, path,
               std::string(steps[k].logits_digest ? "present" : "missing") + "; allowed: " +
                   (steps[0].logits_digest ? "a digest at every step, as steps[0] has" : "none, as steps[0] has none") +
                   " (a run records the logits digest at every step or at none)");
  }
}

void steps_are_in_range(const RunRecord& r, const Context& c, const std::string& at) {
  for (std::size_t k = 0; k < r.result.steps.size(); ++k) {
    const StepRecord& s = r.result.steps[k];
    const std::string path = item(at + ".steps", k);
    step_values_are_in_range(s, c, path);
    kept_is_a_count(s, r, c, path);
    candidates_are_all_there(s, r, c, path);
    draw_is_in_range(s, c, path);
  }
  logits_digests_are_well_formed(r, c, at);
}

void timing_is_a_duration(const RunRecord& r, const Context& c, const std::string& at) {
  if (r.result.seconds)
    real_in(*r.result.seconds, 0, std::numeric_limits<double>::max(), c, at + ".timing.seconds", "a finite number >= 0");
}

}  // namespace

// Runs of llama.cpp's engine carry what decided their bits (the llama_cpp block), and the block
// only comes with such runs; its settings are the writer's names.
void llama_cpp_is_described(const Evidence& e, const std::string& file) {
  const auto llama_run = std::find_if(e.runs.begin(), e.runs.end(), [](const RunRecord& r) { return r.params.engine == Engine::llama_cpp; });
  if (llama_run != e.runs.end() && !e.llama_cpp)
    violated(file, "llama_cpp", "missing, though run " + llama_run->id + " ran on engine llama.cpp; allowed: the block "
                                "genrepro run writes beside such runs (docs/evidence-format.md)");
  if (!e.llama_cpp) return;
  if (llama_run == e.runs.end() && !e.runs.empty())
    violated(file, "llama_cpp", "present, though no run ran on engine llama.cpp; allowed: only beside such runs");
  one_of(file, "llama_cpp.kv_type", e.llama_cpp->kv_type, {"f16", "f32"});
  one_of(file, "llama_cpp.flash_attn", e.llama_cpp->flash_attn, {"auto", "on", "off"});
}

void check_evidence(const Evidence& e, const std::string& file) {
  const Context c{file, vocab_size_of(e.model, file), e.model.eos_token_id};
  model_is_described(e.model, c);
  environment_is_described(e.environment, file);
  llama_cpp_is_described(e, file);
  ids_are_unique(e, file);
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const RunRecord& r = e.runs[i];
    const std::string at = "runs[" + std::to_string(i) + "]";
    params_are_allowed(r, c, at);
    positions_are_counted(r, c, at);
    prompt_is_not_empty(r, file, at);
    ids_are_in_vocabulary(r, c, at);
    steps_are_numbered_in_order(r, file, at);
    steps_are_the_output_ids(r, file, at);
    output_within_the_cap(r, file, at);
    stop_step_counts_the_output(r, file, at);
    stop_reason_fits_the_output(r, c, at);
    candidates_are_distinct(r, file, at);
    steps_are_in_range(r, c, at);
    timing_is_a_duration(r, c, at);
  }
}

}  // namespace genrepro
