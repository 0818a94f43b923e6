// genrepro plan EXPERIMENT...: what `run` would do, before it does it: every file checked, every
// run listed with its id, parameters and shard, the new tokens at most, and a rough time.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/flag_kinds.hpp"
#include "cli/model_choice.hpp"
#include "cli/verbs.hpp"
#include "evidence/environment.hpp"
#include "model/model_config.hpp"
#include "plan/plan_checks.hpp"
#include "plan/run_cost.hpp"
#include "plan/run_plan.hpp"
#include "params/experiment_file.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"
#include "util/shard.hpp"

namespace genrepro::cli {

namespace {

struct PlanOptions {
  std::vector<std::string> experiments;
  ModelChoice model;
  std::string shard = "1/1";
  std::optional<int> threads;  // default: what run uses, default_threads()
  bool json = false;
  int64_t max_runs = static_cast<int64_t>(kDefaultMaxRuns);
};

std::string short_number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

int run_plan(const PlanOptions& o, Console& io) {
  const Shard shard = checked_shard(o.shard);
  // The estimate is of the run `run` would make: its default is every CPU this process may use.
  const int threads = o.threads ? checked_threads("--threads", *o.threads) : default_threads();
  const std::vector<ExperimentSpec> experiments = load_experiments(o.experiments, checked_max_runs("--max-runs", o.max_runs));
  const ModelFiles files = resolve_chosen_model(o.model);
  const Gpt2Config config = read_gpt2_config(files.config);
  const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(files.vocab, files.merges);
  check_vocabularies(config, files.config, tokenizer, files.vocab);
  RunPlan plan = plan_runs(experiments, shard, config, tokenizer);
  // run --shard would write this evidence: refused here as there, before anything runs.
  const EvidenceSizeEstimate evidence = estimate_evidence_size(plan);
  check_evidence_size(plan);

  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  int64_t selected = 0, new_tokens = 0;
  double seconds = 0;
  for (size_t i = 0; i < plan.runs.size(); ++i) {
    const ExpandedRun& run = plan.runs[i];
    const bool in_shard = shard_selects(shard, static_cast<int64_t>(i));
    const auto prompt_tokens = static_cast<int64_t>(plan.prompt_ids[i].size());
    if (in_shard) {
      ++selected;
      new_tokens += run.params.max_new_tokens;
      seconds += estimated_run_seconds(run, prompt_tokens, config);
    }
    runs.push_back({{"index", i},
                    {"id", run.id},
                    {"experiment", run.experiment},
                    {"shard", static_cast<int64_t>(i) % shard.count + 1},
                    {"selected", in_shard},
                    {"prompt_tokens", prompt_tokens},
                    {"params", params_to_json(run.params)}});
  }
  const double wall = seconds / std::min<double>(threads, std::max<int64_t>(selected, 1));
  if (o.json) {
    nlohmann::ordered_json doc = {
        {"schema", "genrepro.plan/1"},
        {"model", {{"path", files.dir}, {"source", to_string(files.source)}}},
        {"shard", {{"index", shard.index}, {"count", shard.count}}},
        {"runs", runs},
        {"total", {{"runs", plan.runs.size()}, {"selected", selected}, {"new_tokens_at_most", new_tokens},
                   {"estimated_seconds", wall}, {"threads", threads},
                   {"evidence_bytes_at_most", evidence.bytes}}}};
    io.out << json_document_text(doc) << "\n";
    return kExitOk;
  }
  io.err << files.source_note << "\n";
  for (const auto& r : runs) {
    const auto& p = r["params"];
    io.out << (r["selected"].get<bool>() ? "  " : "- ") << r["id"].get<std::string>() << "  shard "
           << r["shard"].get<int64_t>() << "/" << shard.count << "  " << p["mode"].get<std::string>();
    if (p["mode"] == "sample")
      io.out << " T=" << short_number(p["temperature"].get<double>()) << " top_k=" << p["top_k"].get<int64_t>()
             << " top_p=" << short_number(p["top_p"].get<double>()) << " seed=" << p["seed"].get<uint64_t>();
    io.out << "  max_new_tokens=" << p["max_new_tokens"].get<int64_t>()
           << (p["use_cache"].get<bool>() ? "  kv cache" : "  recompute") << "\n";
  }
  io.out << "plan: " << selected << " of " << plan.runs.size() << " runs";
  if (shard.count > 1) io.out << " (shard " << o.shard << ", marked '  '; '- ' is another shard's)";
  io.out << ", at most " << new_tokens << " new tokens, roughly " << short_number(std::max(1.0, std::round(wall)))
         << " s on " << threads << (threads == 1 ? " thread" : " threads") << " (a rough estimate), evidence of "
         << short_number(std::max(0.1, std::round(static_cast<double>(evidence.bytes) / 1e5) / 10)) << " MB at most\n";
  return kExitOk;
}

}  // namespace

void setup_plan(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Check experiment files against the model and list the runs `genrepro run` would execute:\n"
      "their ids, parameters and shards, the new tokens at most, and a rough time. Runs nothing.");
  cmd->add_option("experiments", o->experiments, "Experiment files (JSON), e.g. experiments/article/*.json")->required();
  add_model_flags(*cmd, o->model);
  cmd->add_option("--max-runs", o->max_runs,
                  "Refuse experiments that expand to more runs than this (counted before expanding;\n"
                  "at most 1000000)")
      ->capture_default_str();
  cmd->add_option("--shard", o->shard, "Show shard I of N: the runs whose index % N == I-1 (as run --shard)")
      ->type_name("I/N")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Runs at once, for the time estimate (as run --threads; default: the CPUs this process may use,\n"
                  "at most 8, as run)")
      ->type_name("INT");
  cmd->add_flag("--json", o->json, "Print the plan as JSON (schema genrepro.plan/1)");
  on_verb(*cmd, ctx, [o, &ctx] { ctx.exit_code = run_plan(*o, ctx.io); });
}

}  // namespace genrepro::cli
