#include "engine/replay.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "util/build_features.hpp"
#include "util/errors.hpp"
#include "util/index_pool.hpp"
#include "model/model_config.hpp"
#include "util/sha256.hpp"
#include "engine/generation_loop.hpp"
#if GENREPRO_WITH_LIBTORCH
#include "engine/gpt2_model.hpp"
#endif
#include "engine/logits_source.hpp"
#include "engine/run_chain.hpp"
#include "engine/run_environment.hpp"
#include "engine/step_evidence.hpp"
#include "strict/strict_gpt2.hpp"
#include "strict/thread_team.hpp"
#include "evidence/logits_digest.hpp"
#include "plan/plan_checks.hpp"
#include "sampling/presets.hpp"
#include "tokenizer/tokenizer.hpp"

namespace genrepro {

namespace {

// More worker threads than this is a typo; each holds a model's activations (as `run`).
constexpr int kMaxReplayThreads = 256;

// One golden run with where it came from (the golden files outlive the replay).
struct GoldenRun {
  const std::string& file;
  std::string where;  // "runs[3]"
  const RunRecord& record;
};

std::string at(const GoldenRun& g, const std::string& field) { return g.file + ": " + g.where + "." + field; }

[[noreturn]] void damaged(const std::string& location, const std::string& what) {
  throw EvidenceError(location + ": " + what + "; the golden is damaged: bless it again from evidence (genrepro bless)");
}

void check_probability(const GoldenRun& g, const std::string& field, double p) {
  if (!(p >= 0 && p <= 1)) {  // also false for NaN
    std::ostringstream found;
    found << std::setprecision(17) << p;
    damaged(at(g, field), "found " + found.str() + "; allowed: a probability in [0, 1]");
  }
}

void check_ids(const GoldenRun& g, const std::string& field, const std::vector<int64_t>& ids, const Gpt2Config& config) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= config.vocab_size)
      throw EvidenceError(at(g, field) + "[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                          " is outside this model's vocabulary [0, " + std::to_string(config.vocab_size) +
                          "); replay the golden with the model it was made with (--model)");
  }
}

// What replay relies on beyond what reading checked (read_golden: the steps are the output
// tokens, or the single first-prediction step), checked against the model's config before the
// model loads: the ids fit the vocabulary and the context, and every compared probability is one.
void check_golden_run(const GoldenRun& g, const Gpt2Config& config) {
  const GenerationResult& r = g.record.result;
  check_ids(g, "prompt_ids", r.prompt_ids, config);
  check_ids(g, "output_ids", r.output_ids, config);
  const int64_t length = static_cast<int64_t>(r.prompt_ids.size() + r.output_ids.size());
  if (length > config.n_positions)
    throw EvidenceError(at(g, "output_ids") + ": prompt and output hold " + std::to_string(length) +
                        " tokens; allowed: at most this model's context (n_positions = " +
                        std::to_string(config.n_positions) + "); replay the golden with the model it was made with (--model)");
  const bool first_prediction = g.record.params.max_new_tokens == 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    const StepRecord& s = r.steps[i];
    const std::string step = "steps[" + std::to_string(i) + "]";
    if (first_prediction) {
      for (size_t c = 0; c < s.top.size(); ++c) {
        const std::string cand = step + ".top[" + std::to_string(c) + "]";
        if (s.top[c].id < 0 || s.top[c].id >= config.vocab_size)
          throw EvidenceError(at(g, cand + ".id") + " = " + std::to_string(s.top[c].id) + " is outside this model's vocabulary [0, " +
                              std::to_string(config.vocab_size) + "); replay the golden with the model it was made with (--model)");
        check_probability(g, cand + ".prob", s.top[c].prob);
        check_probability(g, cand + ".prob_scaled", s.top[c].prob_scaled);
      }
    } else {
      check_probability(g, step + ".prob", s.prob);
      check_probability(g, step + ".prob_t1", s.prob_t1);
    }
  }
}

std::vector<GoldenRun> golden_runs(const std::vector<EvidenceFile>& golden) {
  std::vector<GoldenRun> runs;
  for (const EvidenceFile& file : golden)
    for (size_t i = 0; i < file.evidence.runs.size(); ++i)
      runs.push_back(GoldenRun{file.path, "runs[" + std::to_string(i) + "]", file.evidence.runs[i]});
  return runs;
}

// model.files["<weights file name>"].sha256 of one golden file.
std::string golden_weights_sha256(const EvidenceFile& file, const std::string& weights_name) {
  const auto entry = file.evidence.model.files.find(weights_name);
  if (entry == file.evidence.model.files.end())
    throw EvidenceError(file.path + ": model.files[\"" + weights_name + "\"].sha256" +
                        ": missing; replay needs the golden's weights digest to know the drift is meaningful");
  return entry->second.sha256;
}

std::vector<ModelMismatch> find_model_mismatches(const std::vector<EvidenceFile>& golden, const ModelFiles& model,
                                                 const std::string& model_sha256) {
  const std::string weights_name = std::filesystem::path(model.weights).filename().string();
  std::vector<ModelMismatch> mismatches;
  for (const EvidenceFile& file : golden) {
    const std::string sha = golden_weights_sha256(file, weights_name);
    if (sha != model_sha256) mismatches.push_back({file.path, sha, model_sha256});
  }
  return mismatches;
}

bool replays_with_cache(const RunParams& params, ReplayForward forward) {
  switch (forward) {
    case ReplayForward::as_run: return params.use_cache;
    case ReplayForward::recompute: return false;
    case ReplayForward::cached: return true;
  }
  return params.use_cache;
}

// Token text is not compared; describe_step still asks for it.
std::string no_text(int64_t) { return {}; }

// A framework run's stage counts at one step against the golden's: the first step and
// stage where they differ, and how many steps differ. Drift alone can move a boundary token across
// a stage's cut, so this is shown, never failed on; the tokens' probabilities decide.
void compare_stages(const StepRecord& golden, const std::vector<StageKept>& now, int64_t step, ReplayRun& out) {
  ++out.stage_steps_compared;
  for (std::size_t i = 0; i < std::max(golden.stages.size(), now.size()); ++i) {
    const StageKept* g = i < golden.stages.size() ? &golden.stages[i] : nullptr;
    const StageKept* n = i < now.size() ? &now[i] : nullptr;
    if (g && n && g->stage == n->stage && g->kept == n->kept) continue;
    ++out.stage_steps_differing;
    if (!out.first_stage_difference)
      out.first_stage_difference = StageDifference{step, g ? g->stage : n->stage, g ? std::optional<int64_t>(g->kept) : std::nullopt,
                                                   n && (!g || g->stage == n->stage) ? std::optional<int64_t>(n->kept) : std::nullopt};
    return;
  }
}

// The golden step's digest against this replay's logits, when the golden recorded one by the
// algorithm this build computes (another algorithm's value cannot be compared).
void compare_digest(const StepRecord& golden, const std::vector<float>& logits, int64_t step, ReplayRun& out) {
  if (!golden.logits_digest) return;
  const std::string now = logits_row_digest(logits);
  if (logits_digest_algorithm(*golden.logits_digest) != logits_digest_algorithm(now)) return;
  ++out.digests.compared;
  if (now == *golden.logits_digest) ++out.digests.equal;
  else if (!out.digests.first_difference) out.digests.first_difference = step;
}

// A run that picked tokens: feed prompt + golden tokens one step at a time and step the run's own
// chain, seeded as the run was, exactly as GenerationRun::advance does (one draw per step, the
// step recorded the same way); compare the golden token's probabilities, the stages' kept sets and
// where this build's own pick would part from the golden token.
void replay_tokens(const GoldenRun& g, LogitsSource& source, int64_t eos_token_id, ReplayRun& out) {
  const RunParams& params = g.record.params;
  const GenerationResult& golden = g.record.result;
  const StepMath& math = source.step_math();
  RunChain chain(params.sampling, golden.prompt_ids, eos_token_id, math.chain());
  std::vector<int64_t> ids = golden.prompt_ids;
  for (size_t i = 0; i < golden.steps.size(); ++i) {
    const int64_t step = static_cast<int64_t>(i);
    const int64_t token = golden.output_ids[i];
    const std::vector<float> logits = source.next_logits(ids);
    compare_digest(golden.steps[i], logits, step, out);
    const RunStep now = chain.step(logits, step, /*pick=*/true);
    // prob and prob_t1 do not depend on the table's temperature; no candidates are listed.
    const StepRecord described = describe_step(StepInputs{logits, now.final_probs, now.argmax, 1.0, 0}, token, no_text, math);
    out.logp.add(golden.steps[i].prob, described.prob, step, token);
    out.logp_unfiltered.add(golden.steps[i].prob_t1, described.prob_t1, step, token);
    if (sampling::records_stages(params.sampling)) compare_stages(golden.steps[i], now.stages, step, out);
    if (*now.token != token && !out.own_choice_diverges_at) out.own_choice_diverges_at = step;
    ids.push_back(token);  // teacher forcing: the golden token is the history from here on
    chain.accept(token);
  }
}

// max_new_tokens 0: the run recorded the first prediction only; compare its top candidates.
void replay_first_prediction(const GoldenRun& g, LogitsSource& source, int64_t eos_token_id, ReplayRun& out) {
  const RunParams& params = g.record.params;
  const StepRecord& golden = g.record.result.steps.front();
  const std::vector<int64_t>& prompt = g.record.result.prompt_ids;
  const std::vector<float> logits = source.next_logits(prompt);
  const StepMath& math = source.step_math();
  compare_digest(golden, logits, 0, out);
  // The chain on the prompt, no draw (as GenerationRun::advance records a first prediction).
  const RunStep step = RunChain(params.sampling, prompt, eos_token_id, math.chain()).step(logits, 0, /*pick=*/false);
  if (sampling::records_stages(params.sampling)) compare_stages(golden, step.stages, 0, out);
  const int64_t vocab = static_cast<int64_t>(logits.size());
  // Every token as a candidate, so each golden candidate is found whatever its rank is now.
  const StepRecord now = describe_step(StepInputs{logits, step.final_probs, step.argmax, table_temperature(params.sampling), vocab},
                                       std::nullopt, no_text, math);
  std::vector<const Candidate*> by_id(static_cast<size_t>(vocab), nullptr);
  for (const Candidate& c : now.top) by_id[static_cast<size_t>(c.id)] = &c;
  for (const Candidate& c : golden.top) {
    const Candidate& current = *by_id[static_cast<size_t>(c.id)];
    // A candidate the golden's filters removed (prob 0) is compared only if it is kept now.
    if (c.prob > 0 || current.prob > 0) out.logp.add(c.prob, current.prob, 0, c.id);
    out.logp_unfiltered.add(c.prob_scaled, current.prob_scaled, 0, c.id);
  }
}

// The forward the golden's numerics ran: libtorch's (reference, tiled) or genrepro's own (strict).
struct ReplayModel {
#if GENREPRO_WITH_LIBTORCH
  std::optional<Gpt2Model> torch;
  const Gpt2Config& config() const { return strict ? strict->config() : torch->config(); }
#else
  const Gpt2Config& config() const { return strict->config(); }
#endif
  std::optional<strict::StrictGpt2> strict;
};

ReplayRun replay_one(const GoldenRun& g, const ReplayModel& model, ReplayForward forward) {
  const int64_t eos_token_id = model.config().eos_token_id;
  ReplayRun out;
  out.id = g.record.id;
  out.golden_file = g.file;
  out.use_cache = replays_with_cache(g.record.params, forward);
  out.first_prediction = g.record.params.max_new_tokens == 0;
  out.steps = static_cast<int64_t>(g.record.result.steps.size());
  // A source per run: the cached one holds this run's keys and values. A strict forward runs on
  // this worker's thread alone, as run's recompute workers do (its bits do not depend on it).
  strict::ThreadTeam team(1);
  std::unique_ptr<LogitsSource> source;
  if (model.strict)
    source = out.use_cache ? make_strict_cached_source(*model.strict, team) : make_strict_recompute_source(*model.strict, team);
#if GENREPRO_WITH_LIBTORCH
  else
    source = out.use_cache ? make_cached_source(*model.torch) : make_recompute_source(*model.torch);
#endif
  if (out.first_prediction)
    replay_first_prediction(g, *source, eos_token_id, out);
  else
    replay_tokens(g, *source, eos_token_id, out);
  return out;
}

// Replays every run on `threads` workers; results[k] belongs to runs[k].
std::vector<ReplayRun> replay_all(const std::vector<GoldenRun>& runs, const ReplayModel& model, ReplayForward forward,
                                  int threads, Progress& progress) {
  std::vector<ReplayRun> results(runs.size());
  try {
    for_each_index(runs.size(), threads, [&](size_t k) {
      results[k] = replay_one(runs[k], model, forward);
      progress.run_finished(static_cast<int64_t>(runs[k].record.result.steps.size()));
    });
  } catch (...) {
    progress.finish();  // end the progress line before the error is printed
    throw;
  }
  progress.finish();
  return results;
}

// Strict evidence replays on the strict forward, the rest on libtorch's; one replay computes one
// kind, so GOLDEN must not mix them.
NumericsMode golden_numerics(const std::vector<EvidenceFile>& golden) {
  const auto mode_of = [](const EvidenceFile& f) { return f.evidence.numerics ? f.evidence.numerics->mode : NumericsMode::reference; };
  const auto is_strict = [&](const EvidenceFile& f) { return mode_of(f) == NumericsMode::strict; };
  const auto strict_file = std::find_if(golden.begin(), golden.end(), is_strict);
  if (strict_file == golden.end()) return NumericsMode::reference;
  const auto other = std::find_if_not(golden.begin(), golden.end(), is_strict);
  if (other != golden.end())
    throw EvidenceError(other->path + ": numerics.mode " + to_string(mode_of(*other)) + " beside " + strict_file->path +
                        "'s strict: one replay recomputes one forward; replay the strict and the other evidence separately");
  return NumericsMode::strict;
}

void pool_into(Drift& total, const Drift& run) {
  total.compared += run.compared;
  total.sum += run.sum;
  total.infinite += run.infinite;
  if (!total.first_infinite_step) total.first_infinite_step = run.first_infinite_step;
}

void check_options(const ReplayOptions& o) {
  if (!std::isfinite(o.logprob_tolerance) || o.logprob_tolerance < 0) {
    std::ostringstream shown;
    shown << o.logprob_tolerance;
    throw UsageError("--logprob-tolerance " + shown.str() + ": must be a finite number >= 0 (|Δ log p| allowed per step)");
  }
  if (o.threads < 1 || o.threads > kMaxReplayThreads)
    throw UsageError("--threads " + std::to_string(o.threads) + ": allowed: a whole number from 1 to " +
                     std::to_string(kMaxReplayThreads) + " (runs replayed at once, one intra-op thread each)");
}

}  // namespace

ReplayReport replay_golden(const std::vector<EvidenceFile>& golden, const ReplayOptions& o) {
  check_options(o);
  const std::vector<GoldenRun> runs = golden_runs(golden);
  if (runs.empty())
    throw EvidenceError((golden.empty() ? std::string("GOLDEN") : golden.front().path) +
                        ": holds no runs; nothing to replay (give evidence written by genrepro run)");

  ReplayReport report;
  report.logprob_tolerance = o.logprob_tolerance;
  report.forward = o.forward;
  report.numerics = golden_numerics(golden);
  for (const EvidenceFile& f : golden) report.golden_files.push_back(f.path);
  report.model_dir = o.model.dir;
  report.model_sha256 = sha256_file(o.model.weights).sha256;
  report.model_mismatches = find_model_mismatches(golden, o.model, report.model_sha256);
  if (!report.model_mismatches.empty() && !o.allow_model_mismatch)
    throw EvidenceError(describe_mismatch(report.model_mismatches.front()) +
                        "; give --model with the golden's weights, or --allow-model-mismatch to replay anyway");

  const Gpt2Config config = read_gpt2_config(o.model.config);
  for (const GoldenRun& g : runs) check_golden_run(g, config);

  if (o.on_checked) o.on_checked(report.model_mismatches);

  prepare_runtime_for_runs();  // one intra-op and one BLAS thread per run, as `run` executes
  // Replayed as run computed it: a padded vocabulary's extra ids are cut the same way.
  const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(o.model.vocab, o.model.merges);
  check_vocabularies(config, o.model.config, tokenizer, o.model.vocab);
  ReplayModel model;
  if (report.numerics == NumericsMode::strict) {
    strict::ThreadTeam team(o.threads);
    model.strict.emplace(strict::StrictGpt2::load(o.model, tokenizer.vocab_size(), team));
  }
  else {
#if GENREPRO_WITH_LIBTORCH
    model.torch.emplace(Gpt2Model::load(o.model, tokenizer.vocab_size()));
#else
    throw UsageError(std::string("replay of evidence in numerics ") + to_string(report.numerics) + ": " + kLibtorchNeeded);
#endif
  }
  Progress progress(static_cast<int64_t>(runs.size()), o.progress != nullptr ? o.progress_style : ProgressStyle::none,
                    o.progress != nullptr ? *o.progress : std::cerr);
  report.runs = replay_all(runs, model, o.forward, o.threads, progress);
  for (const ReplayRun& r : report.runs) {
    pool_into(report.logp, r.logp);
    pool_into(report.logp_unfiltered, r.logp_unfiltered);
    if (r.logp.max > report.logp.max) {
      report.logp.max = r.logp.max;
      report.logp.max_step = r.logp.max_step;
      report.logp.max_token_id = r.logp.max_token_id;
      report.max_run = r.id;
    }
    report.logp_unfiltered.max = std::max(report.logp_unfiltered.max, r.logp_unfiltered.max);
  }
  return report;
}

}  // namespace genrepro
