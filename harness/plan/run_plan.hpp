#pragma once
// The plan of a set of experiments on one model: every run expanded, its prompt encoded and
// checked against the model's context and vocabulary, and the runs a shard executes. No
// libtorch: `genrepro plan` shows it before anything runs, and the runner executes it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_config.hpp"
#include "params/experiment_file.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/shard.hpp"

namespace genrepro {

// The experiments, checked against the model and expanded; nothing has run.
struct RunPlan {
  std::vector<ExperimentSpec> experiments;
  std::vector<ExpandedRun> runs;                  // all runs, unsharded, in index order
  std::vector<std::vector<int64_t>> prompt_ids;   // per run
  std::vector<int64_t> selected;                  // indices of the runs this shard executes
};

// A control text that cannot stand where it was given: its control, its entry as written, the text
// and what is allowed there.
struct ControlTextRefusal {
  std::string control;
  int64_t entry = 0;
  std::string text;
  std::string allowed;
};

// Encodes every text of p's controls by its framework's rule (control_text_rule) and puts the ids
// in its entry (place_control_text_ids). Returns the first text that encodes to no token, or to
// more than one for suppress_tokens, leaving p unchanged. A spec parses tokenizer-free; this is
// where its texts become ids, before anything runs (plan_runs, generate).
std::optional<ControlTextRefusal> encode_control_texts(RunParams& p, const Gpt2Tokenizer& tokenizer);

// Encodes the prompts and the control texts (encode_control_texts; the runs, in `runs` and in
// `experiments`, hold their ids from here on) and checks every run against the model's context
// and vocabulary. Throws SpecError / UsageError naming the experiment file and JSON path.
RunPlan plan_runs(const std::vector<ExperimentSpec>& experiments, const Shard& shard, const Gpt2Config& config,
                  const Gpt2Tokenizer& tokenizer);

}  // namespace genrepro
