// Reading evidence, fourth stage: what holds between fields (evidence_consistency.hpp lists the
// relations, docs/validation.md tabulates them). One function per relation; each names the file,
// the JSON path, the value found and the value the relation requires.
#include "evidence/evidence_consistency.hpp"
#include "evidence/control_text_consistency.hpp"
#include "evidence/json_number.hpp"

#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "params/experiment_file.hpp"
#include "params/framework_params.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"
#include "util/sha256.hpp"

namespace genrepro {

namespace {

// Texts are shown up to this many bytes in messages (both values, so a line stays readable).
constexpr std::size_t kShownTextBytes = 60;

[[noreturn]] void inconsistent(const std::string& file, const std::string& path, const std::string& what) {
  throw EvidenceError(file + ": " + path + ": " + what + "; " + kRegenerateEvidenceHint);
}

std::string show_text(const std::string& s) {
  std::string cut = s;
  if (cut.size() > kShownTextBytes) cut = cut.substr(0, kShownTextBytes) + "...";
  return nlohmann::json(cut).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string at_step(const std::string& at, std::size_t k) { return at + ".steps[" + std::to_string(k) + "]"; }
std::string at_top(const std::string& step, std::size_t i) { return step + ".top[" + std::to_string(i) + "]"; }

// The listed entry of the chosen token, if it is listed.
std::optional<std::size_t> listed_at(const StepRecord& s) {
  if (!s.token_id) return std::nullopt;
  for (std::size_t i = 0; i < s.top.size(); ++i)
    if (s.top[i].id == *s.token_id) return i;
  return std::nullopt;
}

// ---- one step ----

// engine/generation_loop.cpp is_greedy: greedy, or sampling at temperature 0, picks the argmax
// from softmax(logits) and keeps 1.
bool picks_argmax(const RunParams& p) { return p.sampling.mode == DecodeMode::greedy || p.sampling.temperature == 0; }

bool is_framework_run(const RunParams& p) { return p.sampling.framework != Framework::article; }

// A framework stage that moves logits by the history or a list (penalties, biases,
// bans, masks) or keeps tokens by another score than the logit (typical) can give a token a higher
// final probability than a better-by-logit one; the article's filters never do.
bool may_reorder(const RunParams& p) {
  if (!is_framework_run(p)) return false;
  for (SamplerStage s : active_stages(p.sampling, picks_argmax(p))) {
    switch (s) {
      case SamplerStage::sequence_bias:
      case SamplerStage::repetition_penalty:
      case SamplerStage::no_repeat_ngram_size:
      case SamplerStage::bad_words_ids:
      case SamplerStage::min_length:
      case SamplerStage::min_new_tokens:
      case SamplerStage::suppress_tokens:
      case SamplerStage::typical_p:
      case SamplerStage::logit_bias:
      case SamplerStage::penalties: return true;
      default: break;
    }
  }
  return false;
}

// The writer lists the best candidates by logit (torch::topk); prob_scaled = softmax(logits / T)
// is monotone in the logit, so it never rises along the list (equal values are ties, in any id
// order). The final distribution keeps a best-by-logit subset, so prob never rises either, except
// across a tie, where a filter may keep one of two equal tokens.
void candidates_in_order(const StepRecord& s, bool reordering, const std::string& file, const std::string& path) {
  std::map<int64_t, std::size_t> seen;
  for (std::size_t i = 0; i < s.top.size(); ++i) {
    const auto [it, fresh] = seen.emplace(s.top[i].id, i);
    if (!fresh)
      inconsistent(file, at_top(path, i) + ".id",
                   "found " + std::to_string(s.top[i].id) + ", already top[" + std::to_string(it->second) +
                       "].id; allowed: each token once in a step's candidates");
    if (i == 0) continue;
    const Candidate& a = s.top[i - 1];
    const Candidate& b = s.top[i];
    if (b.prob_scaled > a.prob_scaled)
      inconsistent(file, at_top(path, i) + ".prob_scaled",
                   "found " + json_number(b.prob_scaled) + " after top[" + std::to_string(i - 1) + "].prob_scaled = " + json_number(a.prob_scaled) +
                       "; allowed: at most " + json_number(a.prob_scaled) + " (candidates are listed best first)");
    if (!reordering && b.prob_scaled < a.prob_scaled && b.prob > a.prob)
      inconsistent(file, at_top(path, i) + ".prob",
                   "found " + json_number(b.prob) + " after top[" + std::to_string(i - 1) + "].prob = " + json_number(a.prob) +
                       "; allowed: at most " + json_number(a.prob) + " (a filter keeps the best candidates, never a worse one alone)");
  }
}

// rest_mass = 1 - Σ top.prob_scaled and margin = top[0].prob_scaled - top[1].prob_scaled, as
// engine/step_evidence.cpp computes them. With one candidate listed the second-best is not in the
// file: its margin is only bounded by the best's probability.
void derived_values_match(const StepRecord& s, bool greedy, const std::string& file, const std::string& path) {
  if (s.top.empty()) return;
  const double slack = relation_slack(s.top.size());
  double listed = 0;
  for (const Candidate& c : s.top) listed += c.prob_scaled;
  if (std::fabs(s.rest_mass - (1 - listed)) > slack)
    inconsistent(file, path + ".rest_mass",
                 "found " + json_number(s.rest_mass) + "; allowed: " + json_number(1 - listed) + " (1 - the sum of top[].prob_scaled, within " +
                     json_number(slack) + ")");
  if (s.top.size() >= 2) {
    const double margin = s.top[0].prob_scaled - s.top[1].prob_scaled;
    if (std::fabs(s.margin - margin) > relation_slack(1))
      inconsistent(file, path + ".margin",
                   "found " + json_number(s.margin) + "; allowed: " + json_number(margin) + " (top[0].prob_scaled - top[1].prob_scaled, within " +
                       json_number(relation_slack(1)) + ")");
  } else if (s.margin > s.top[0].prob_scaled + relation_slack(1)) {
    inconsistent(file, path + ".margin",
                 "found " + json_number(s.margin) + "; allowed: at most " + json_number(s.top[0].prob_scaled) +
                     " (top[0].prob_scaled minus a probability)");
  }
  // A sampled step's kept counts its final distribution's positive entries; greedy's is 1 by
  // definition while its candidates carry softmax(logits), so the count holds for sampling only.
  if (greedy) return;
  std::size_t positive = 0;
  for (const Candidate& c : s.top) positive += c.prob > 0 ? 1 : 0;
  if (static_cast<int64_t>(positive) > s.kept)
    inconsistent(file, path + ".kept",
                 "found " + std::to_string(s.kept) + "; allowed: at least " + std::to_string(positive) +
                     " (the candidates with prob > 0 are all kept)");
}

void chosen_entry_matches(const StepRecord& s, std::size_t listed, double table_temperature, const std::string& file,
                          const std::string& path, bool is_listed);

// The chosen token's entries are copies of one float32 value (final_p, softmax at T = 1), so they
// agree exactly; greedy picks the argmax, which topk lists first (or ties with the first).
void chosen_token_matches(const StepRecord& s, const RunRecord& r, const std::string& file, const std::string& path) {
  if (!s.token_id) return;
  const bool greedy = picks_argmax(r.params);
  const double table_temperature = r.params.sampling.temperature > 0 ? r.params.sampling.temperature : 1.0;
  const std::optional<std::size_t> j = listed_at(s);
  if (is_framework_run(r.params)) {
    // A framework's greedy picks the best of its processed distribution (penalties may move it
    // off the raw argmax): no listed candidate has a larger final probability.
    if (!j) return;
    if (greedy) {
      for (std::size_t i = 0; i < s.top.size(); ++i)
        if (s.top[i].prob > s.top[*j].prob)
          inconsistent(file, path + ".token_id",
                       "found " + std::to_string(*s.token_id) + " (prob " + json_number(s.top[*j].prob) +
                           "); allowed: a token no listed candidate beats, but " + at_top(path, i) + ".prob = " +
                           json_number(s.top[i].prob) + " (a greedy step picks the best of its final distribution)");
    }
    chosen_entry_matches(s, *j, table_temperature, file, path, true);
    return;
  }
  if (greedy && !s.top.empty() && (!j || s.top[*j].prob_scaled != s.top[0].prob_scaled))
    inconsistent(file, path + ".token_id",
                 "found " + std::to_string(*s.token_id) + "; allowed: top[0].id = " + std::to_string(s.top[0].id) +
                     " (a greedy step picks its best candidate)");
  if (greedy && s.prob != s.prob_t1)
    inconsistent(file, path + ".prob",
                 "found " + json_number(s.prob) + "; allowed: prob_t1 = " + json_number(s.prob_t1) +
                     " (greedy's final distribution is softmax(logits) at T = 1)");
  if (!j) return;
  chosen_entry_matches(s, *j, table_temperature, file, path, true);
}

// The chosen token's listed entry carries its prob, prob_t1 and text.
void chosen_entry_matches(const StepRecord& s, std::size_t listed, double table_temperature, const std::string& file,
                          const std::string& path, bool is_listed) {
  if (!is_listed) return;
  const Candidate& c = s.top[listed];
  const std::string entry = at_top(path, listed);
  if (s.prob != c.prob)
    inconsistent(file, path + ".prob", "found " + json_number(s.prob) + "; allowed: " + entry + ".prob = " + json_number(c.prob) + " (the chosen token's entry)");
  if (table_temperature == 1 && s.prob_t1 != c.prob_scaled)
    inconsistent(file, path + ".prob_t1",
                 "found " + json_number(s.prob_t1) + "; allowed: " + entry + ".prob_scaled = " + json_number(c.prob_scaled) +
                     " (the chosen token's entry; the table's temperature is 1)");
  if (s.token_text != c.text)
    inconsistent(file, path + ".token_text",
                 "found " + show_text(s.token_text) + "; allowed: " + entry + ".text = " + show_text(c.text) + " (the chosen token's entry)");
}

// A draw record only where the run drew, beside two tokens kept (a sampled article or Hugging Face run;
// llama.cpp always draws, its T <= 0 too), by its framework's rule, and its runner-up had a chance:
// when listed among the candidates, its prob in the final distribution is above 0.
void draw_fits_the_run(const StepRecord& s, const RunRecord& r, const std::string& file, const std::string& path) {
  if (!s.draw) return;
  // Two tokens had probability > 0: the chosen one and the runner-up (after kept's own rule, so
  // an edited kept is named by that rule first).
  if (s.kept < 2)
    inconsistent(file, path + ".kept",
                 "found " + std::to_string(s.kept) + "; allowed: at least 2 at a step with a draw record (the runner-up had probability > 0 too)");
  const bool llama = r.params.sampling.framework == Framework::llama_cpp;
  if (!llama && picks_argmax(r.params))
    inconsistent(file, path + ".draw", "present; allowed: none (the run picks the argmax: greedy, or temperature 0)");
  const DrawRule rule = llama ? DrawRule::inverse_cdf : DrawRule::exponential_race;
  if (s.draw->rule != rule)
    inconsistent(file, path + ".draw.rule",
                 std::string("found \"") + to_string(s.draw->rule) + "\"; allowed: \"" + to_string(rule) + "\" (params.framework " +
                     to_string(r.params.sampling.framework) + " draws by it)");
  for (std::size_t i = 0; i < s.top.size(); ++i)
    if (s.top[i].id == s.draw->runner_up && !(s.top[i].prob > 0))
      inconsistent(file, path + ".draw.runner_up",
                   "found " + std::to_string(s.draw->runner_up) + ", whose " + at_top(path, i).substr(path.size() + 1) +
                       ".prob is 0; allowed: a token with probability > 0 (one that could have been drawn)");
}

// An article step lists no stages; a framework step lists the stages its params make
// run (active_stages), in order, each keeping at least one token and at most what the stage before
// it kept, and the last at least the step's kept (a positive probability needs a finite logit).
void stages_match(const StepRecord& s, const RunRecord& r, int64_t vocab, const std::string& file, const std::string& path) {
  if (!is_framework_run(r.params)) {
    if (!s.stages.empty())
      inconsistent(file, path + ".stages",
                   "found " + std::to_string(s.stages.size()) + " stages; allowed: none (params.framework is article: the article's chain records no stages)");
    return;
  }
  const std::vector<SamplerStage> expected = active_stages(r.params.sampling, picks_argmax(r.params));
  if (s.stages.size() != expected.size())
    inconsistent(file, path + ".stages",
                 "found " + std::to_string(s.stages.size()) + " stages; allowed: " + std::to_string(expected.size()) + " (" +
                     [&] {
                       std::string n;
                       for (SamplerStage e : expected) n += (n.empty() ? "" : ",") + std::string(to_string(e));
                       return n.empty() ? std::string("none") : n;
                     }() + ": the stages params." + std::string("framework ") + to_string(r.params.sampling.framework) + " runs)");
  int64_t before = vocab;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const std::string at = path + ".stages[" + std::to_string(i) + "]";
    if (s.stages[i].stage != to_string(expected[i]))
      inconsistent(file, at + ".stage",
                   "found " + show_text(s.stages[i].stage) + "; allowed: " + show_text(to_string(expected[i])) + " (the framework's order)");
    if (s.stages[i].kept < 1 || s.stages[i].kept > before)
      inconsistent(file, at + ".kept",
                   "found " + std::to_string(s.stages[i].kept) + "; allowed: an integer from 1 to " + std::to_string(before) +
                       (i == 0 ? " (vocab_size)" : " (what the stage before kept: stages only remove tokens)"));
    before = s.stages[i].kept;
  }
  if (!expected.empty() && !(picks_argmax(r.params) && r.params.sampling.framework == Framework::hf) && s.kept > before)
    inconsistent(file, path + ".kept",
                 "found " + std::to_string(s.kept) + "; allowed: at most " + std::to_string(before) +
                     " (the last stage's kept: a token the chain removed has no probability)");
}

// ---- one run ----

// engine/generation_loop.cpp: EOS ends the run the moment it is picked (before the cap is
// looked at); the cap next; then the context (model.n_positions) when no room is left.
void stop_fits_the_context(const RunRecord& r, const ModelInfo& m, const std::string& file, const std::string& at) {
  const GenerationResult& g = r.result;
  const auto prompt = static_cast<int64_t>(g.prompt_ids.size());
  const auto made = static_cast<int64_t>(g.output_ids.size());
  const std::string ctx = "model.n_positions = " + std::to_string(m.n_positions);
  if (prompt + made > m.n_positions)
    inconsistent(file, at + ".output_ids",
                 "holds " + std::to_string(made) + " ids after " + std::to_string(prompt) + " prompt ids; allowed: at most " +
                     std::to_string(std::max<int64_t>(m.n_positions - prompt, 0)) + " (" + ctx + ")");
  if (g.stop_reason == StopReason::context_full && (prompt + made != m.n_positions || made >= r.params.max_new_tokens))
    inconsistent(file, at + ".stop.reason",
                 "found \"context_full\" with " + std::to_string(prompt) + " + " + std::to_string(made) +
                     " ids; allowed: \"context_full\" only when prompt and output fill " + ctx + " before params.max_new_tokens = " +
                     std::to_string(r.params.max_new_tokens));
  if (!r.params.stop_at_eos) return;
  for (int64_t k = 0; k < made; ++k) {
    if (g.output_ids[k] != m.eos_token_id) continue;
    if (k + 1 < made)
      inconsistent(file, at + ".output_ids[" + std::to_string(k) + "]",
                   "found model.eos_token_id = " + std::to_string(m.eos_token_id) + " followed by " + std::to_string(made - k - 1) +
                       " more ids; allowed: EOS only last (params.stop_at_eos is true)");
    if (g.stop_reason != StopReason::eos)
      inconsistent(file, at + ".stop.reason",
                   "found \"" + std::string(to_string(g.stop_reason)) + "\"; allowed: \"eos\" (the last output id is model.eos_token_id = " +
                       std::to_string(m.eos_token_id) + " and params.stop_at_eos is true)");
  }
}

void id_is_its_hash(const RunRecord& r, const std::string& file, const std::string& at) {
  const std::string expected = run_id(r.experiment, r.prompt_index, r.prompt, r.params);
  if (r.id != expected)
    inconsistent(file, at + ".id",
                 "found \"" + r.id + "\"; allowed: \"" + expected + "\" (the id of its experiment, prompt_index, prompt and params)");
}

// The experiments' specs expanded once per file: the run each id names.
class Grids {
 public:
  Grids(const Evidence& e, const std::string& file) : e_(e), file_(file) {}

  void check(const RunRecord& r, const std::string& at) {
    const std::map<std::string, ExpandedRun>& runs = grid_of(r, at);
    const auto it = runs.find(r.id);
    const std::size_t k = index_[r.experiment];
    if (it == runs.end())
      inconsistent(file_, at + ".id",
                   "found \"" + r.id + "\"; allowed: one of the " + std::to_string(runs.size()) + " runs experiments[" +
                       std::to_string(k) + "].spec expands to (the run is not a point of its experiment's grid)");
    const ExpandedRun& planned = it->second;
    if (r.prompt_index != planned.prompt_index)
      inconsistent(file_, at + ".prompt_index",
                   "found " + std::to_string(r.prompt_index) + "; allowed: " + std::to_string(planned.prompt_index) +
                       " (experiments[" + std::to_string(k) + "].spec)");
    if (r.prompt != planned.prompt)
      inconsistent(file_, at + ".prompt",
                   "found " + show_text(r.prompt) + "; allowed: " + show_text(planned.prompt) + " (experiments[" + std::to_string(k) + "].spec)");
    const std::string found = params_as_written_json(r.params).dump();
    const std::string expected = params_as_written_json(planned.params).dump();
    if (found != expected)
      inconsistent(file_, at + ".params",
                   "found " + found + "; allowed: " + expected + " (experiments[" + std::to_string(k) + "].spec, " + planned.source + ")");
  }

 private:
  // Every experiments[] entry of the run's experiment counts: a golden file may keep runs of an
  // earlier version of the experiment beside the current one (bless keeps the spec that made them).
  const std::map<std::string, ExpandedRun>& grid_of(const RunRecord& r, const std::string& at) {
    const auto known = grids_.find(r.experiment);
    if (known != grids_.end()) return known->second;
    std::map<std::string, ExpandedRun> runs;
    bool found = false;
    for (std::size_t k = 0; k < e_.experiments.size(); ++k) {
      const ExperimentRecord& x = e_.experiments[k];
      if (x.name != r.experiment) continue;
      const std::string path = "experiments[" + std::to_string(k) + "].spec";
      ExperimentSpec spec;
      try {
        spec = parse_experiment(x.spec.dump(), file_ + ": " + path, RunBudget{kMaxRunsCeiling, 0});
      } catch (const SpecError& err) {
        inconsistent(file_, path, std::string("is not an experiment this build expands (") + err.what() + ")");
      }
      if (spec.name != x.name)
        inconsistent(file_, path + ".name", "found " + show_text(spec.name) + "; allowed: " + show_text(x.name) + " (experiments[" +
                                                std::to_string(k) + "].name)");
      for (ExpandedRun& run : spec.runs) runs.emplace(run.id, std::move(run));
      if (!found) index_[r.experiment] = k;
      found = true;
    }
    if (found) return grids_.emplace(r.experiment, std::move(runs)).first->second;
    std::string names;
    for (const ExperimentRecord& x : e_.experiments) names += (names.empty() ? "" : ", ") + show_text(x.name);
    inconsistent(file_, at + ".experiment",
                 "found " + show_text(r.experiment) + "; allowed: an experiments[].name (" + (names.empty() ? "none recorded" : names) + ")");
  }

  const Evidence& e_;
  const std::string& file_;
  std::map<std::string, std::map<std::string, ExpandedRun>> grids_;
  std::map<std::string, std::size_t> index_;
};

// ---- texts ----

// The tokenizer the evidence names, or why it is not at hand.
struct TokenizerAtHand {
  std::shared_ptr<const Gpt2Tokenizer> tokenizer;
  std::string missing;
};

// The recorded file of one kind (the vocabulary or the merges), under either of its names.
const FileRecord* recorded(const ModelInfo& m, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    const auto it = m.files.find(n);
    if (it != m.files.end()) return &it->second;
  }
  return nullptr;
}

// The file in `dir`, under either name, whose bytes have the recorded checksum; or why none has.
std::optional<std::string> file_with(const std::string& dir, std::initializer_list<const char*> names, const FileRecord& want,
                                     std::string& why) {
  for (const char* n : names) {
    const std::string path = (std::filesystem::path(dir) / n).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    try {
      if (sha256_file(path).sha256 == want.sha256) return path;
      why = path + " is another file than the recorded one";
    } catch (const Error& err) {
      why = err.what();
    }
    return std::nullopt;
  }
  why = dir + " holds no " + *names.begin();
  return std::nullopt;
}

// The directories searched, in order: the model's (model.path) and the tokenizer directory the
// fixture is made from ($GENREPRO_TOKENIZER_DIR, else the build's), where a model's tokenizer files
// usually are byte for byte (the fixture copies them; GPT-2's are the same files).
TokenizerAtHand locate_tokenizer(const ModelInfo& m) {
  const FileRecord* vocab = recorded(m, {"vocab.json", "encoder.json"});
  const FileRecord* merges = recorded(m, {"merges.txt", "vocab.bpe"});
  if (!vocab || !merges) return {nullptr, "model.files names no vocab.json and merges.txt"};
  const char* env = std::getenv("GENREPRO_TOKENIZER_DIR");
  const std::string tokenizer_dir = env && *env ? env : GENREPRO_DEFAULT_TOKENIZER_DIR;
  std::string why;
  for (const std::string& dir : {m.path, tokenizer_dir}) {
    std::string missing;
    const std::optional<std::string> v = file_with(dir, {"vocab.json", "encoder.json"}, *vocab, missing);
    const std::optional<std::string> g = v ? file_with(dir, {"merges.txt", "vocab.bpe"}, *merges, missing) : std::nullopt;
    if (v && g) {
      try {
        return {std::make_shared<const Gpt2Tokenizer>(Gpt2Tokenizer::from_files(*v, *g)), ""};
      } catch (const Error& err) {
        missing = err.what();
      }
    }
    why += (why.empty() ? "" : "; ") + missing;
  }
  return {nullptr, "the recorded vocab.json and merges.txt (model.files sha256) are not at hand: " + why};
}

// Loading and checksumming the tokenizer costs tens of milliseconds, and a verb reads several files
// made with one tokenizer (a golden directory and the new evidence), so what a model directory
// holds is found once per process. The entry is keyed by the path and the recorded checksums, and
// a tokenizer is only ever taken from files whose bytes have those checksums: what is cached can
// change no verdict, only how long finding it takes.
TokenizerAtHand tokenizer_for(const ModelInfo& m) {
  static std::mutex lock;
  static std::map<std::string, TokenizerAtHand> found;
  const char* env = std::getenv("GENREPRO_TOKENIZER_DIR");
  std::string key = m.path + "\n" + (env ? env : "");
  for (const auto& [name, f] : m.files) key += "\n" + name + "=" + f.sha256;
  const std::lock_guard<std::mutex> hold(lock);
  const auto it = found.find(key);
  if (it != found.end()) return it->second;
  return found.emplace(key, locate_tokenizer(m)).first->second;
}

void text_is(const std::string& found, const std::string& expected, const std::string& file, const std::string& path,
             const std::string& of) {
  if (found != expected)
    inconsistent(file, path, "found " + show_text(found) + "; allowed: " + show_text(expected) + " (the tokenizer's decode of " + of + ")");
}

std::string ids_text(const std::vector<int64_t>& ids) {
  std::string s = "[";
  for (std::size_t i = 0; i < ids.size() && i < 8; ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s + (ids.size() > 8 ? ",...]" : "]");
}

void texts_are_decoded(const RunRecord& r, const Gpt2Tokenizer& t, const std::string& file, const std::string& at) {
  const GenerationResult& g = r.result;
  const std::vector<int64_t> encoded = t.encode(r.prompt);
  if (encoded != g.prompt_ids)
    inconsistent(file, at + ".prompt_ids",
                 "found " + ids_text(g.prompt_ids) + "; allowed: " + ids_text(encoded) + " (the tokenizer's encoding of prompt)");
  std::vector<int64_t> all = g.prompt_ids;
  all.insert(all.end(), g.output_ids.begin(), g.output_ids.end());
  text_is(r.text, t.decode_for_display(all), file, at + ".text", "prompt_ids + output_ids");
  text_is(r.continuation, t.decode_for_display(g.output_ids), file, at + ".continuation", "output_ids");
  for (std::size_t k = 0; k < g.steps.size(); ++k) {
    const StepRecord& s = g.steps[k];
    const std::string path = at_step(at, k);
    if (s.token_id) text_is(s.token_text, t.token_text(*s.token_id), file, path + ".token_text", "token_id " + std::to_string(*s.token_id));
    for (std::size_t i = 0; i < s.top.size(); ++i)
      text_is(s.top[i].text, t.token_text(s.top[i].id), file, at_top(path, i) + ".text", "id " + std::to_string(s.top[i].id));
  }
}

}  // namespace

double relation_slack(std::size_t candidates) { return static_cast<double>(candidates + 1) * FLT_EPSILON; }

void check_consistency(const Evidence& e, const std::string& file) {
  Grids grids(e, file);
  const int64_t vocab = e.model.config.is_object() && e.model.config.contains("vocab_size") && e.model.config["vocab_size"].is_number_integer()
                            ? e.model.config["vocab_size"].get<int64_t>()
                            : std::numeric_limits<int64_t>::max();
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const RunRecord& r = e.runs[i];
    const std::string at = "runs[" + std::to_string(i) + "]";
    id_is_its_hash(r, file, at);
    grids.check(r, at);
    stop_fits_the_context(r, e.model, file, at);
    for (std::size_t k = 0; k < r.result.steps.size(); ++k) {
      const StepRecord& s = r.result.steps[k];
      const std::string path = at_step(at, k);
      candidates_in_order(s, may_reorder(r.params), file, path);
      derived_values_match(s, picks_argmax(r.params) && !(is_framework_run(r.params) && r.params.sampling.framework == Framework::llama_cpp), file, path);
      chosen_token_matches(s, r, file, path);
      stages_match(s, r, vocab, file, path);
      draw_fits_the_run(s, r, file, path);
    }
  }
  if (e.runs.empty()) return;
  const TokenizerAtHand at_hand = tokenizer_for(e.model);
  if (!at_hand.tokenizer) return;
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const std::string at = "runs[" + std::to_string(i) + "]";
    try {
      texts_are_decoded(e.runs[i], *at_hand.tokenizer, file, at);
      control_texts_are_encoded(e.runs[i], *at_hand.tokenizer, file, at);
    } catch (const TokenizerError& err) {  // an id past the tokenizer's vocabulary (a padded vocab_size)
      inconsistent(file, at, std::string("its ids are not all the tokenizer's (") + err.what() + ")");
    }
  }
}

std::string texts_unchecked(const Evidence& e) {
  if (e.runs.empty()) return "";
  return tokenizer_for(e.model).missing;
}

std::string unchecked_texts_note(const std::string& file, const Evidence& e) {
  const std::string why = texts_unchecked(e);
  if (why.empty()) return "";
  return "note: " + file + ": texts not checked against the tokenizer: " + why;
}

void print_unchecked_texts(const std::string& file, const Evidence& e, std::ostream& err) {
  const std::string note = unchecked_texts_note(file, e);
  if (!note.empty()) err << note << "\n";
}

void print_unchecked_texts(const std::vector<EvidenceFile>& files, std::ostream& err) {
  for (const EvidenceFile& f : files) print_unchecked_texts(f.path, f.evidence, err);
}

}  // namespace genrepro
