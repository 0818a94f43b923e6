// genrepro run, the part that runs the model (flags and experiment files are checked in cli/run.cpp).
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <optional>
#include <string>

#include "cli/engine/engine_verbs.hpp"
#include "cli/interrupt.hpp"
#include "engine/run_environment.hpp"
#include "engine/runner.hpp"
#include "strict/strict_gpt2.hpp"
#include "evidence/checkpoint.hpp"
#include "compare/diff_format.hpp"
#include "evidence/evidence.hpp"
#include "compare/evidence_diff.hpp"
#include "model/model_files.hpp"
#include "util/errors.hpp"
#include "util/progress.hpp"
#include "util/sha256.hpp"

namespace genrepro::cli {

namespace {

// The MLPerf-style determinism check: every run once with recompute (the article's
// use_cache=False) and once with the KV cache; the tokens must not diverge. Probability drift
// is reported but allowed: the two paths multiply matrices of different shapes.
// The first run whose record differs, byte for byte (timing aside), between the batched pass
// and the same runs decoded one at a time; empty when none does.
std::optional<std::string> first_batch_difference(const Evidence& batched, const Evidence& alone) {
  const OrderedJson b = strip_volatile(evidence_to_json(batched));
  const OrderedJson a = strip_volatile(evidence_to_json(alone));
  for (size_t i = 0; i < b["runs"].size() && i < a["runs"].size(); ++i)
    if (b["runs"][i] != a["runs"][i]) return b["runs"][i]["id"].get<std::string>();
  if (b["runs"].size() != a["runs"].size()) return std::string("(run count)");
  return std::nullopt;
}

int check_equivalence(const RunnerOptions& runner, double prob_tolerance, bool json, Console& io) {
  CacheEquivalenceEvidence both = run_with_and_without_cache(runner);
  const std::optional<std::string> batch_difference = first_batch_difference(both.cached, both.cached_alone);
  const std::string batch = both.cached.numerics ? both.cached.numerics->execution.value("batch", OrderedJson(1)).dump() : "1";
  EvidenceDiffOptions options;
  options.prob_tolerance = prob_tolerance;
  const EvidenceDiff diff = diff_cache_equivalence(EvidenceFile{"recompute", std::move(both.recompute)},
                                                   EvidenceFile{"kv-cache", std::move(both.cached)}, options);
  const bool equivalent = tokens_equivalent(diff);
  if (json) {
    OrderedJson verdict = {{"equivalent", equivalent && !batch_difference},
                           {"kv_cache_matches_recompute", equivalent},
                           {"batched_matches_alone", !batch_difference.has_value()},
                           {"first_batched_difference", batch_difference ? OrderedJson(*batch_difference) : OrderedJson(nullptr)},
                           {"numerics", to_string(runner.numerics.mode)},
                           {"diff", diff_to_json(diff)}};
    io.out << verdict.dump(2) << "\n";
    return equivalent && !batch_difference ? kExitOk : kExitDiffer;
  }
  io.out << format_diff_text(diff);
  io.out << "check-equivalence: " << (equivalent ? "KV cache and recompute pick the same tokens"
                                                     : "KV cache and recompute DIVERGE")
            << "\n";
  io.out << "check-equivalence: "
         << (batch_difference ? "batched run " + *batch_difference + " DIFFERS from the same run decoded alone"
                              : std::string("batched runs (batch ") + batch + ") equal the same runs decoded alone, byte for byte")
         << " (numerics " << to_string(runner.numerics.mode) << ")\n";
  return equivalent && !batch_difference ? kExitOk : kExitDiffer;
}

// The code that computes the runs, as bytes: the genrepro executable and every genrepro library
// mapped into this process (sha256 of each, in path order). A git commit alone would not tell
// two builds of one dirty tree apart.
OrderedJson build_fingerprint() {
  std::set<std::string> files;
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (!ec) files.insert(exe);
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos && line.find("libgenrepro_", slash) != std::string::npos) files.insert(line.substr(slash));
  }
  OrderedJson fingerprint = OrderedJson::object();
  for (const std::string& f : files) fingerprint[std::filesystem::path(f).filename().string()] = sha256_file(f).sha256;
  return fingerprint;
}

// The checkpoint beside --out, from the first run to the written evidence (docs/resume.md): opened
// and locked before the model loads (so an unwritable --out or a second writer is refused before
// any work), started or resumed once the header is known, one line per finished run.
class RunCheckpoint {
 public:
  // A checkpoint that holds no run is empty, and CheckpointFile deletes it when the run ends.
  RunCheckpoint(const RunRequest& o, Console& io) : o_(o), io_(io), file_(*o.checkpoint), found_(o.checkpoint_found) {}

  const std::string& path() const { return file_.path(); }

  // RunnerOptions::resume: the finished runs to keep, after checking that they are this run's.
  std::vector<RunRecord> resume(const Evidence& header) {
    OrderedJson key = checkpoint_key(header, std::to_string(o_.shard.index) + "/" + std::to_string(o_.shard.count));
    key["genrepro"]["files_sha256"] = build_fingerprint();
    if (!o_.resume || found_.empty) {
      if (o_.resume && file_.existed())
        io_.err << "resume: " << file_.path() << " is empty (it holds no finished run); starting from the first run\n";
      else if (o_.resume)
        io_.err << "resume: no checkpoint at " << file_.path() << "; starting from the first run\n";
      file_.start(key);
      return {};
    }
    const std::string mismatch = checkpoint_key_mismatch(found_.key, key);
    if (!mismatch.empty())
      throw UsageError(file_.path() + ": is from " + mismatch +
                       "; resume with the same experiments, model, genrepro build and --shard, or delete it to start over");
    std::vector<RunRecord> runs = checkpoint_runs(found_, header, file_.path());
    file_.truncate_to(found_.complete_bytes);
    if (!runs.empty()) kept_ = ResumeRecord{file_.path(), found_.sha256, static_cast<int64_t>(runs.size())};
    io_.err << "resuming: " << runs.size() << " finished run(s) kept from " << file_.path()
            << (found_.dropped_partial_line ? " (a last line cut short by a kill was dropped)" : "") << "\n";
    return runs;
  }

  void append(const RunRecord& run) { file_.append(run_to_json(run)); }

  void finished() { file_.remove(); }

  // What the evidence records about the runs kept (empty when none was).
  const std::optional<ResumeRecord>& kept() const { return kept_; }

 private:
  const RunRequest& o_;
  Console& io_;
  CheckpointFile& file_;  // opened and locked by the CLI (cli/run.cpp), held by the request
  const CheckpointContents& found_;
  std::optional<ResumeRecord> kept_;
};

void write_evidence_keeping_checkpoint(const RunRequest& o, const Evidence& evidence, const RunCheckpoint& checkpoint) {
  try {
    write_evidence(o.out, evidence);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + "; all " + std::to_string(evidence.runs.size()) + " runs are kept in " +
                checkpoint.path() + ": fix that and re-run with --resume, which writes the evidence without running them again");
  }
}

}  // namespace

int run_experiments(const RunRequest& o, Console& io) {
  // refused before the model loads (and again in the record); strict numerics use no BLAS nor ATen kernel
  if (o.numerics.mode != NumericsMode::strict) loaded_kernels(o.numerics.cpu_kernels);
  RunnerOptions runner;
  runner.experiments = o.experiments;
  runner.shard = o.shard;
  runner.threads = o.threads;
  runner.numerics = o.numerics;
  runner.llama.library = o.llama_lib;
  runner.llama.settings = o.llama;
  runner.model = resolve_chosen_model(o.model);
  // A live line on a terminal; in a CI log a plain line at most every 10 s (util/progress.hpp).
  runner.progress = &io.err;
  runner.progress_style = progress_style(io.err_is_terminal);
  runner.on_planned = [&](const RunPlan& plan) {
    io.err << runner.model.source_note << "\n";
    io.err << "running " << plan.selected.size() << " of " << plan.runs.size() << " runs";
    if (runner.shard.count > 1) io.err << " (shard " << o.shard_text << ")";
    io.err << " on " << o.threads << (o.threads == 1 ? " thread" : " threads") << ", numerics "
           << to_string(o.numerics.mode);
    if (o.numerics.mode == NumericsMode::strict) io.err << " (" << strict::kStrictKernelRevision << ")";
    else io.err << ", cpu kernels " << to_string(o.numerics.cpu_kernels);
    const auto llama = std::count_if(plan.selected.begin(), plan.selected.end(), [&](int64_t i) {
      return plan.runs[static_cast<size_t>(i)].params.engine == Engine::llama_cpp;
    });
    if (llama > 0) io.err << "; " << llama << " of them on llama.cpp's engine (docs/engines.md)";
    io.err << "\n";
  };
  if (o.check_equivalence) return check_equivalence(runner, o.prob_tolerance, o.json, io);
  const auto start = std::chrono::steady_clock::now();
  InterruptWatch interrupt;
  RunCheckpoint checkpoint(o, io);
  runner.resume = [&](const Evidence& header) { return checkpoint.resume(header); };
  runner.on_run_finished = [&](const RunRecord& run) { checkpoint.append(run); };
  runner.stop = &interrupt.requested();
  Evidence evidence;
  try {
    evidence = genrepro::run_experiments(runner);
  } catch (const RunsInterrupted& stopped) {
    if (stopped.finished == 0) {
      io.err << "genrepro: interrupted by " << signal_name(interrupt.signal_number()) << " before any run finished; "
             << o.out << " was not touched and there is nothing to resume" << std::endl;
      return interrupted_exit_code(interrupt.signal_number());
    }
    io.err << "genrepro: interrupted by " << signal_name(interrupt.signal_number()) << ": " << stopped.finished << " of "
           << stopped.total << " runs finished and kept in " << checkpoint.path() << "; " << o.out
           << " was not touched. To continue, run the same command with --resume" << std::endl;
    return interrupted_exit_code(interrupt.signal_number());
  }
  evidence.resumed = checkpoint.kept();
  write_evidence_keeping_checkpoint(o, evidence, checkpoint);
  checkpoint.finished();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json) {
    int64_t tokens = 0;
    for (const RunRecord& r : evidence.runs) tokens += static_cast<int64_t>(r.result.output_ids.size());
    const OrderedJson summary = {{"evidence", o.out},
                                 {"runs", evidence.runs.size()},
                                 {"new_tokens", tokens},
                                 {"seconds", seconds},
                                 {"tokens_per_second", seconds > 0 ? tokens / seconds : 0.0},
                                 {"numerics", evidence.numerics ? numerics_to_json(*evidence.numerics) : OrderedJson(nullptr)}};
    io.out << summary.dump(2) << "\n";
    return kExitOk;
  }
  io.out << "wrote " << o.out << " (" << evidence.runs.size() << " runs)\n";
  return kExitOk;
}

}  // namespace genrepro::cli
