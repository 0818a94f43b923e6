// Golden evidence against new evidence, document by document: runs matched by id (each pair
// compared by diff_run, run_diff.cpp), missing and extra runs, and the environment and
// provenance blocks listed as likely causes.
#include "compare/evidence_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "compare/diff_format.hpp"
#include "compare/run_pairing.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// ---------- environment and provenance ----------

using Leaves = std::vector<std::pair<std::string, const OrderedJson*>>;

void flatten(const OrderedJson& j, const std::string& path, Leaves& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    return;
  }
  out.emplace_back(path, &j);
}

bool is_volatile_path(const std::string& path) {
  const std::string tail = ".threads.runs_concurrently";
  return path.rfind("environment", 0) == 0 && path.size() >= tail.size() &&
         path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
}

// "environment[runs greedy/p0/greedy-3f1a, sampling/p0/sample-t1-s42-2ce3, ... (11 runs)]": the
// merged shards' other environments, named by their runs' ids (what a reader can look up; the
// indices into the unsharded expansion were not), an index only where no run of the file has it.
std::string runs_label(const std::vector<int64_t>& runs, const Evidence& n) {
  constexpr size_t kShown = 3;
  std::map<int64_t, const std::string*> id_of;
  for (const RunRecord& r : n.runs) id_of.emplace(r.index, &r.id);
  std::string label = "environment[run" + std::string(runs.size() == 1 ? " " : "s ");
  for (size_t i = 0; i < runs.size() && i < kShown; ++i) {
    const auto it = id_of.find(runs[i]);
    label += (i ? ", " : "") + (it != id_of.end() ? *it->second : "index " + std::to_string(runs[i]));
  }
  if (runs.size() > kShown) label += ", ... (" + std::to_string(runs.size()) + " runs)";
  return label + "]";
}

// Every leaf of two blocks that differs, golden's order first, then leaves only the new one has.
void compare_blocks(const OrderedJson& g, const OrderedJson& n, const std::string& prefix, const std::set<std::string>& skip,
                    std::vector<ValueDifference>& out) {
  Leaves gl, nl;
  flatten(g, prefix, gl);
  flatten(n, prefix, nl);
  const std::map<std::string, const OrderedJson*> nmap(nl.begin(), nl.end());
  std::set<std::string> seen;
  const auto skipped = [&](const std::string& p) { return is_volatile_path(p) || skip.count(p); };
  for (const auto& [path, gv] : gl) {
    seen.insert(path);
    if (skipped(path)) continue;
    const auto it = nmap.find(path);
    const OrderedJson nv = it == nmap.end() ? OrderedJson() : *it->second;
    if (*gv != nv) out.push_back({path, *gv, nv, std::nullopt});
  }
  for (const auto& [path, nv] : nl)
    if (!seen.count(path) && !skipped(path)) out.push_back({path, OrderedJson(), *nv, std::nullopt});
}

void add_unique(std::vector<ValueDifference>& into, const std::vector<ValueDifference>& found) {
  for (const ValueDifference& d : found)
    if (std::none_of(into.begin(), into.end(), [&](const ValueDifference& e) { return e.path == d.path; })) into.push_back(d);
}

bool is_strict(const Evidence& e) { return e.numerics && e.numerics->mode == NumericsMode::strict; }

// What strict numerics never consult: libtorch, its threads, the BLAS and the variables only they
// read (strict/strict_gpt2.hpp computes every float itself). LD_PRELOAD and LD_LIBRARY_PATH stay:
// they can swap the C library's exp and log, which strict sampling calls.
bool read_by_libraries_only(const std::string& path) {
  // "environment.<field>", or "environment[runs <ids>].<field>" whose ids may hold dots themselves
  const size_t label_end = path.rfind("].");
  const size_t dot = label_end == std::string::npos ? path.find('.') : label_end + 1;
  if (dot == std::string::npos) return false;
  const std::string field = path.substr(dot + 1);
  for (const char* library : {"libtorch_version", "torch_config", "torch_parallel_info", "blas", "cpu_capability",
                              "threads.intra_op", "threads.inter_op", "threads.omp_max"}) {
    const std::string name = library;
    if (field == name || field.rfind(name + ".", 0) == 0) return true;
  }
  const std::string variables = "numerics_env.";
  if (field.rfind(variables, 0) != 0) return false;
  const std::string variable = field.substr(variables.size());
  return variable != "LD_PRELOAD" && variable != "LD_LIBRARY_PATH";
}

std::vector<ValueDifference> environment_differences(const Evidence& g, const Evidence& n) {
  std::vector<ValueDifference> out;
  compare_blocks(environment_to_json(g.environment), environment_to_json(n.environment), "environment", {}, out);
  // Runs merged from shards of other machines: where their environment differs from the golden's.
  for (const RunEnvironment& re : n.run_environments)
    compare_blocks(environment_to_json(g.environment), environment_to_json(re.environment), runs_label(re.runs, n), {}, out);
  // Between two strict files a library that neither called is no likely cause: a strict run of the
  // libtorch build loads none (cli/engine_loader.hpp), one made before that recorded them.
  if (is_strict(g) && is_strict(n))
    out.erase(std::remove_if(out.begin(), out.end(), [](const ValueDifference& d) { return read_by_libraries_only(d.path); }),
              out.end());
  return out;
}

// Evidence from before the numerics modes is reference evidence.
std::vector<ValueDifference> numerics_differences(const Evidence& g, const Evidence& n) {
  std::vector<ValueDifference> out;
  const NumericsRecord reference;
  compare_blocks(numerics_identity_json(g.numerics.value_or(reference)),
                 numerics_identity_json(n.numerics.value_or(reference)), "numerics", {}, out);
  // llama.cpp's runs: its release, CPU backend, KV cache, flash attention and GGUF decide their
  // bits as the numerics decide genrepro's (where the library lies and its threads do not).
  const auto llama = [](const Evidence& e) { return e.llama_cpp ? llama_cpp_to_json(*e.llama_cpp) : OrderedJson(); };
  compare_blocks(llama(g), llama(n), "llama_cpp", {"llama_cpp.library", "llama_cpp.threads"}, out);
  return out;
}

OrderedJson tool_json(const ToolInfo& t) { return {{"version", t.version}, {"git_commit", t.git_commit}}; }

std::vector<ValueDifference> provenance_differences(const Evidence& g, const Evidence& n) {
  std::vector<ValueDifference> out;
  compare_blocks(tool_json(g.genrepro), tool_json(n.genrepro), "genrepro", {}, out);
  // Where the model lives differs from machine to machine; what it is does not.
  compare_blocks(model_to_json(g.model), model_to_json(n.model), "model", {"model.path"}, out);
  return out;
}

void check_tolerance(double tolerance) {
  if (!std::isfinite(tolerance) || tolerance < 0)
    throw UsageError("--prob-tolerance " + show_delta(tolerance) + ": must be a finite number >= 0 (default " +
                     show_delta(kDefaultProbTolerance) + ")");
}

std::optional<double> median_kept(const RunRecord& r) {
  std::vector<int64_t> kept;
  for (const StepRecord& s : r.result.steps) kept.push_back(s.kept);
  if (kept.empty()) return std::nullopt;
  std::sort(kept.begin(), kept.end());
  const std::size_t m = kept.size() / 2;
  return kept.size() % 2 ? static_cast<double>(kept[m]) : (kept[m - 1] + kept[m]) / 2.0;
}

// Moves the runs `pair_by` pairs out of missing and extra, into pairs.
void pair_missing_with_extra(const std::vector<EvidenceFile>& golden, const EvidenceFile& current, EvidenceDiff& diff) {
  std::vector<const RunRecord*> g, n;
  for (const EvidenceFile& f : golden)
    for (const RunRecord& r : f.evidence.runs) g.push_back(&r);
  for (const RunRecord& r : current.evidence.runs) n.push_back(&r);
  std::set<std::string> paired_golden, paired_new;
  for (const RunPair& p : pair_runs(g, n, diff.pair_by)) {
    diff.pairs.push_back(describe_pair(*p.golden, *p.current, diff.prob_tolerance));
    paired_golden.insert(p.golden->id);
    paired_new.insert(p.current->id);
  }
  const auto drop = [](std::vector<std::string>& ids, const std::set<std::string>& paired) {
    ids.erase(std::remove_if(ids.begin(), ids.end(), [&](const std::string& id) { return paired.count(id) > 0; }), ids.end());
  };
  drop(diff.missing, paired_golden);
  drop(diff.extra, paired_new);
}

}  // namespace

std::string pair_verdict(const PairedRun& pair) {
  return "parameter change: " + (pair.change.empty() ? std::string("none (the same parameters under another id)") : pair.change);
}

PairedRun describe_pair(const RunRecord& golden, const RunRecord& current, double prob_tolerance) {
  PairedRun p;
  p.golden_id = golden.id;
  p.new_id = current.id;
  p.diff = diff_run(golden, current, prob_tolerance);
  for (const ValueDifference& d : p.diff.params) {
    const std::string key = d.path.rfind("params.", 0) == 0 ? d.path.substr(7) : d.path;
    p.change += (p.change.empty() ? "" : ", ") + key + " " + show_json(d.golden) + " \u2192 " + show_json(d.current);
  }
  // The contexts are the same up to and including the divergent step (or the shorter run's end).
  const std::vector<StepRecord>& gs = golden.result.steps;
  const std::vector<StepRecord>& ns = current.result.steps;
  const std::size_t common = std::min(gs.size(), ns.size());
  const std::size_t shared = p.diff.divergence ? std::min<std::size_t>(common, static_cast<std::size_t>(p.diff.divergence->step) + 1) : common;
  double gsum = 0, nsum = 0;
  for (std::size_t k = 0; k < shared; ++k) {
    gsum += static_cast<double>(gs[k].kept);
    nsum += static_cast<double>(ns[k].kept);
  }
  p.shared_steps = shared;
  if (shared) {
    p.golden_kept_mean = gsum / static_cast<double>(shared);
    p.new_kept_mean = nsum / static_cast<double>(shared);
  }
  p.golden_kept_median = median_kept(golden);
  p.new_kept_median = median_kept(current);
  p.golden_stop = golden.result.stop_reason;
  p.golden_stop_step = golden.result.stop_step;
  p.new_stop = current.result.stop_reason;
  p.new_stop_step = current.result.stop_step;
  return p;
}

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

std::size_t EvidenceDiff::differing() const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [](const RunDiff& r) { return r.verdict != Verdict::agree; }));
}

std::size_t EvidenceDiff::count(Verdict v) const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [v](const RunDiff& r) { return r.verdict == v; }));
}

std::size_t EvidenceDiff::agreeing_with_other_logits() const {
  return static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [](const RunDiff& r) {
    return r.verdict == Verdict::agree && r.logits_identical == false;
  }));
}

EvidenceDiff diff_evidence(const std::vector<EvidenceFile>& golden, const EvidenceFile& current, const EvidenceDiffOptions& options) {
  check_tolerance(options.prob_tolerance);
  EvidenceDiff diff;
  diff.prob_tolerance = options.prob_tolerance;
  diff.evidence_file = current.path;

  const std::vector<RunRecord>& new_runs = current.evidence.runs;
  std::map<std::string, const RunRecord*> by_id;
  for (const RunRecord& r : new_runs) by_id.emplace(r.id, &r);

  std::set<std::string> golden_ids;
  for (const EvidenceFile& g : golden) {
    diff.golden_files.push_back(g.path);
    add_unique(diff.environment, environment_differences(g.evidence, current.evidence));
    add_unique(diff.numerics, numerics_differences(g.evidence, current.evidence));
    add_unique(diff.provenance, provenance_differences(g.evidence, current.evidence));
    for (const RunRecord& run : g.evidence.runs) {
      golden_ids.insert(run.id);
      const auto it = by_id.find(run.id);
      if (it == by_id.end())
        diff.missing.push_back(run.id);
      else
        diff.runs.push_back(diff_run(run, *it->second, options.prob_tolerance));
    }
  }
  for (const RunRecord& r : new_runs)
    if (!golden_ids.count(r.id)) diff.extra.push_back(r.id);
  diff.pair_by = options.pair_by;
  if (!diff.pair_by.empty() && !diff.missing.empty() && !diff.extra.empty()) pair_missing_with_extra(golden, current, diff);
  return diff;
}

EvidenceDiff diff_cache_equivalence(const EvidenceFile& recompute, const EvidenceFile& cached, const EvidenceDiffOptions& options) {
  std::map<std::string, bool> use_cache;  // run id -> the recompute pass's setting
  for (const RunRecord& r : recompute.evidence.runs) use_cache.emplace(r.id, r.params.use_cache);
  EvidenceFile paired = cached;
  for (RunRecord& r : paired.evidence.runs) {
    const auto it = use_cache.find(r.id);
    if (it != use_cache.end()) r.params.use_cache = it->second;
  }
  return diff_evidence({recompute}, paired, options);
}

bool tokens_equivalent(const EvidenceDiff& diff) {
  return diff.missing.empty() && diff.extra.empty() &&
         std::none_of(diff.runs.begin(), diff.runs.end(), [](const RunDiff& r) { return r.divergence.has_value(); });
}

}  // namespace genrepro
