#pragma once
// Experiment files: a researcher's declarative list of generation runs (docs/experiments.md,
// docs/schema/experiment.schema.json). This stage reads and validates a file and expands it into
// the runs it asks for; nothing here needs a model. Every problem is a SpecError of one line:
// "<file>: <json path> = <value> is not allowed; allowed: <what>" or "<file>: <json path>: <problem>".
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/run_params.hpp"

namespace genrepro {


// One run after grid expansion: everything the engine needs, all defaults filled in.
struct ExpandedRun {
  std::string id;          // "<experiment>/p<prompt>/<summary>-<8 hex>" (docs/evidence-format.md)
  std::string experiment;  // the experiment's name
  int64_t prompt_index = 0;
  std::string prompt;
  RunParams params;
  std::string source;      // JSON path of the run entry it came from ("runs[2]"), for messages
  std::map<std::string, std::string> value_paths;  // run key -> JSON path of the value used

  // Where `key`'s value was written ("runs[1].max_new_tokens[2]", or the top-level default),
  // or the run entry's path plus the key when the default applied.
  std::string path_of(const std::string& key) const;
};

struct ExperimentSpec {
  std::string path;         // as given on the command line
  std::string sha256;       // of the file's bytes
  std::string name;
  std::string description;
  std::vector<std::string> prompts;
  nlohmann::json spec;      // the file as parsed, recorded in the evidence
  std::vector<ExpandedRun> runs;  // prompts outer, then run entries in order, then the grid
};

// How many runs the experiments of one command may expand to (`--max-runs`). The count
// is computed from the lists' lengths before anything is expanded, so a grid of millions is
// refused with its exact count before it costs memory. The default is far beyond a day of runs
// on GPT-2; the ceiling keeps the expanded plan in memory below ~1 GB. Evidence readers keep
// their own size limit (util/bounded_read.hpp), so a grid past ~100,000 runs is run in shards.
inline constexpr uint64_t kDefaultMaxRuns = 100000;
inline constexpr uint64_t kMaxRunsCeiling = 1000000;

// The limit and what earlier files of the same command already used, for the message.
struct RunBudget {
  uint64_t max_runs = kDefaultMaxRuns;
  uint64_t used = 0;
};

// Parses and validates one experiment file's text and expands its grid. `path` names the file
// in messages and in the result. More than budget.max_runs - budget.used runs is a SpecError
// giving the exact count.
ExperimentSpec parse_experiment(const std::string& text, const std::string& path, RunBudget budget = {});

// Every run of `spec` records `top_candidates` candidates per step (`genrepro run
// --top-candidates N`), exactly as if the file said "record": {"top_candidates": N}: the recorded
// spec says so (the evidence, and merge re-expanding it, say what ran) and the run ids change with
// it, since they hash every parameter. sha256 stays that of the file's bytes. Throws SpecError for
// N < 0, and for two runs that would now share an id.
void override_top_candidates(ExperimentSpec& spec, int64_t top_candidates);

// Every run of `spec` computed by `engine` (`genrepro run --engine`), as if the file said
// "engine" at its top level and no entry named another; the recorded spec says so. Run ids do not
// change (the engine is no part of them), so the same experiment through two engines pairs run
// for run. Throws SpecError naming the first run the engine cannot run (llama.cpp: a sampled run
// of a framework other than llama.cpp).
void override_engine(ExperimentSpec& spec, Engine engine);

// Reads `path` ("-": standard input; a pipe or FIFO alike) through util/bounded_read.hpp (at most
// kMaxExperimentBytes; missing, a directory, too large, binary: SpecError) and calls parse_experiment.
ExperimentSpec load_experiment(const std::string& path, RunBudget budget = {});

// Loads every file, refusing an empty list and two experiments with the same name (their run
// ids would collide). All checks that need no model happen here, before anything runs.
// Together they may expand to at most `max_runs` runs.
std::vector<ExperimentSpec> load_experiments(const std::vector<std::string>& paths, uint64_t max_runs = kDefaultMaxRuns);

// The parameters as written in evidence ("params"): every field, defaults filled in.
nlohmann::ordered_json params_to_json(const RunParams& p);
// The parameters as the experiment file gave them: params_to_json with every control text back in
// place of the ids it became (and no control_texts). Run ids hash this form, as they hash the
// prompt's text and not its ids; for a run given no text it is params_to_json(p).
nlohmann::ordered_json params_as_written_json(const RunParams& p);
// The inverse of params_to_json; throws SpecError naming `where` on a missing or mistyped field,
// and on control_texts that do not say what the lists hold (control_texts_problem).
RunParams params_from_json(const nlohmann::json& j, const std::string& where);

// The stable id of a run: experiment name, prompt index, a short summary of the parameters,
// and the first 8 hex digits of sha256 over the canonical JSON {"params": ..., "prompt": ...}
// (params as written: params_as_written_json).
std::string run_id(const std::string& experiment, int64_t prompt_index, const std::string& prompt,
                   const RunParams& p);

// The known key closest to `key` by edit distance, or empty when none is close enough to be a
// plausible typo.
std::string nearest_key(const std::string& key, const std::vector<std::string>& known);

}  // namespace genrepro
