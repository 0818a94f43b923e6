#pragma once
// One file per verb (harness/cli/<verb>.cpp). Each declares its flags in setup_<verb> and checks
// every value there, before anything runs. Verbs that need no model run right here, without
// libtorch. Verbs that run the model (generate, run, replay, env) turn their flags into a typed,
// validated request and hand it to EngineVerbs, which lives in libtorch's layer
// (harness/cli/engine/) and is loaded only when one of them is called.
//
// Exit codes: 0 success / agree, 1 differ (diff, replay, check-article, --check-equivalence),
// 2 bad input, 3 internal error.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/console.hpp"
#include "cli/model_choice.hpp"
#include "evidence/checkpoint.hpp"
#include "compare/evidence_diff.hpp"
#include "evidence/numerics_record.hpp"
#include "llama/llama_settings.hpp"
#include "compare/replay_report.hpp"
#include "params/experiment_file.hpp"
#include "params/run_params.hpp"
#include "util/shard.hpp"

namespace genrepro::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitDiffer = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;

// `genrepro generate`: flags checked and turned into RunParams.
struct GenerateRequest {
  ModelChoice model;
  std::string prompt;
  RunParams params;
  int threads = 1;  // cores: BLAS threads of the decode where the probe proves they keep the bits
  NumericsRequest numerics;
  bool stream = false;  // print the text as tokens arrive (on a terminal, or --stream)
  bool ids = false;  // print the new ids as a JSON array instead of the text
  std::string llama_lib;       // params.engine llama.cpp: --llama-lib or $GENREPRO_LLAMA_LIB
  llama::LlamaSettings llama;  // --llama-kv-type, --llama-flash-attn (threads: --threads)
};

// `genrepro run`: every experiment file parsed and checked (with --top-candidates applied), the
// shard and --out checked.
struct RunRequest {
  std::vector<ExperimentSpec> experiments;
  ModelChoice model;
  std::string out;
  int threads = 1;
  NumericsRequest numerics;
  Shard shard;
  std::string shard_text;  // as given, for messages
  bool check_equivalence = false;
  double prob_tolerance = kDefaultProbTolerance;
  bool json = false;  // the summary (or the equivalence verdict) as one JSON object on stdout
  bool resume = false;  // continue from <out>.checkpoint (docs/resume.md)
  std::string llama_lib;           // --llama-lib or $GENREPRO_LLAMA_LIB: the llama.cpp engine's library
  llama::LlamaSettings llama;      // --llama-kv-type, --llama-flash-attn (threads: --threads)
  // <out>.checkpoint, opened, locked and read before the engine loads (so an unwritable --out, a
  // second writer or a checkpoint without --resume is refused in milliseconds); null with
  // --check-equivalence, which writes nothing.
  std::shared_ptr<CheckpointFile> checkpoint;
  CheckpointContents checkpoint_found;
};

// `genrepro replay`: GOLDEN read and checked as evidence.
struct ReplayRequest {
  std::vector<EvidenceFile> golden;
  ModelChoice model;
  bool json = false;
  double logprob_tolerance = kDefaultLogProbTolerance;
  int threads = 1;
  ReplayForward forward = ReplayForward::as_run;
  bool allow_model_mismatch = false;
  CpuKernels cpu_kernels = CpuKernels::portable;  // must be what the process loaded (docs/numerics.md)
  std::vector<std::pair<std::string, std::string>> overridden_env;  // as NumericsRequest's
};

// `genrepro env` (with the engine): the kernels to load, as run would.
struct EnvRequest {
  CpuKernels cpu_kernels = CpuKernels::portable;
  std::vector<std::pair<std::string, std::string>> overridden_env;
};

// The verbs that need libtorch. Each returns the process exit code; errors are thrown as the
// library's typed errors (genrepro::Error and below), which run_cli turns into exit 2.
class EngineVerbs {
 public:
  virtual ~EngineVerbs() = default;
  virtual int generate(const GenerateRequest& request, Console& io) = 0;
  virtual int run(const RunRequest& request, Console& io) = 0;
  virtual int replay(const ReplayRequest& request, Console& io) = 0;
  virtual int env(const EnvRequest& request, Console& io) = 0;  // the environment block with libtorch's part
};

// What every verb's callback reaches: where to write, the engine, and where to leave its exit code.
struct VerbContext {
  Console& io;
  EngineVerbs& engine;
  int exit_code = kExitOk;
  bool parse_only = false;  // --parse-only: the command line parsed; run nothing
  std::vector<std::string> args;  // the command line as given: which spelling of a flag was typed
};

// Makes `action` the verb's callback, unless the command line only asks whether it parses.
void on_verb(CLI::App& verb, VerbContext& ctx, std::function<void()> action);

void setup_generate(CLI::App& app, VerbContext& ctx);
void setup_tokenize(CLI::App& app, VerbContext& ctx);
void setup_sample(CLI::App& app, VerbContext& ctx);
void setup_run(CLI::App& app, VerbContext& ctx);
void setup_plan(CLI::App& app, VerbContext& ctx);
void setup_diff(CLI::App& app, VerbContext& ctx);
void setup_bless(CLI::App& app, VerbContext& ctx);
void setup_replay(CLI::App& app, VerbContext& ctx);
void setup_report(CLI::App& app, VerbContext& ctx);
void setup_check_article(CLI::App& app, VerbContext& ctx);
void setup_merge(CLI::App& app, VerbContext& ctx);
void setup_sensitivity(CLI::App& app, VerbContext& ctx);
void setup_env(CLI::App& app, VerbContext& ctx);
void setup_fixture(CLI::App& app, VerbContext& ctx);
void setup_export(CLI::App& app, VerbContext& ctx);

}  // namespace genrepro::cli
