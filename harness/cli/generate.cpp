// genrepro generate: one generation run from the command line, greedy or sampled, printing the
// prompt and its continuation (or, with --ids, the new token ids as a JSON array).
#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/flag_kinds.hpp"
#include "cli/numerics_flags.hpp"
#include "evidence/environment.hpp"
#include "cli/verbs.hpp"
#include "plan/run_plan.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "params/framework_params.hpp"
#include "params/sampling_params.hpp"

namespace genrepro::cli {

namespace {

struct GenerateOptions {
  ModelChoice model;
  std::optional<std::string> prompt;       // "-": standard input
  std::optional<std::string> prompt_file;  // a file holding the prompt
  int64_t max_new_tokens = 50;
  bool no_cache = false;
  bool ids = false;
  bool stream = false;
  std::optional<int> threads;  // default: the CPUs this process may use (evidence/environment.hpp)
  NumericsFlags numerics;
  bool greedy = false;
  // Sampling flags: set only when given, so that "given" decides the mode.
  std::optional<double> temperature;
  std::optional<int64_t> top_k;
  std::optional<double> top_p;
  std::optional<std::string> seed;
  std::optional<std::string> sampler_order;
  std::optional<std::string> top_p_rule;
  std::optional<std::string> rng;
  // Issue 23: --framework and one flag per framework control (--repetition-penalty, --min-p, ...),
  // each value the JSON of its experiment-file key (docs/sampling.md).
  std::optional<std::string> framework;
  std::map<std::string, std::string> controls;  // control key -> the flag's text
};

bool any_sampling_control(const GenerateOptions& o) {
  for (const auto& [key, text] : o.controls)
    if (find_control_key(key)->sampling_only) return true;
  return false;
}

// The flag each RunParams field comes from, for error lines.
std::string flag_of(const std::string& field) {
  if (field == "max_new_tokens") return "--max-new-tokens";
  std::string flag = "--" + field;
  for (auto& c : flag)
    if (c == '_') c = '-';
  return flag;
}

bool any_sampling_flag(const GenerateOptions& o) {
  return o.temperature || o.top_k || o.top_p || o.seed || o.sampler_order || o.top_p_rule || o.rng || any_sampling_control(o);
}

// Flags -> RunParams, every value checked (check_run_params) before a model is even located.
RunParams run_params_from(const GenerateOptions& o) {
  for (const auto& [key, text] : o.controls)
    if (o.greedy && find_control_key(key)->sampling_only)
      throw UsageError("--greedy cannot be combined with " + flag_of(key) + " (it only acts when sampling); drop --greedy to sample, or " +
                       flag_of(key) + " for greedy");
  if (o.greedy && any_sampling_flag(o))
    throw UsageError("--greedy cannot be combined with --temperature, --top-k, --top-p, --seed, --sampler-order, "
                     "--top-p-rule or --rng; drop --greedy to sample, or the sampling flags for greedy");
  RunParams p;
  p.max_new_tokens = o.max_new_tokens;
  p.use_cache = !o.no_cache;
  SamplingParams& s = p.sampling;
  // Mode: any sampling flag means sample; --temperature 0 means greedy (as many APIs do).
  s.mode = any_sampling_flag(o) && !(o.temperature && *o.temperature == 0) ? DecodeMode::sample : DecodeMode::greedy;
  // --framework: that framework's defaults first; every flag given overrides them.
  if (o.framework) {
    const auto f = check_framework(*o.framework);
    if (!f.value) throw UsageError(describe_problem(*f.problem, "--framework"));
    resolve_framework(s, *f.value);
  }
  for (const auto& [key, text] : o.controls) {
    const nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded())
      throw UsageError(flag_of(key) + " = " + text + " is not allowed; allowed: " + control_allowed(key) + " (the value is read as JSON)");
    if (const auto problem = read_control(s.controls, key, value))
      throw UsageError(flag_of(key) + problem->at + " = " + (problem->at.empty() ? text : problem->value.dump()) +
                       " is not allowed; allowed: " + problem->allowed + " (the value is read as JSON)");
  }
  if (o.temperature) s.temperature = *o.temperature;
  if (o.top_k) s.top_k = *o.top_k;
  if (o.top_p) s.top_p = *o.top_p;
  if (o.seed) {
    const auto seed = parse_seed(*o.seed);
    if (!seed) throw UsageError("--seed = " + *o.seed + " is not allowed; allowed: " + seed_allowed());
    s.seed = *seed;
  }
  if (o.sampler_order && s.framework != Framework::article) {
    std::vector<std::string> names;
    std::string item;
    std::istringstream in(*o.sampler_order);
    while (std::getline(in, item, ',')) names.push_back(item);
    const auto order = check_framework_order(s.framework, names);
    if (!order.value) throw UsageError(describe_problem(*order.problem, "--sampler-order"));
    s.sampler_order = *order.value;
  } else if (o.sampler_order) {
    try {
      s.sampler_order = parse_sampler_order(*o.sampler_order);
    } catch (const SpecError& e) {
      throw UsageError(std::string("--sampler-order: ") + e.what());
    }
  }
  // An unknown name is reported in check_run_params' order, after the numbers and the order.
  std::vector<ParamProblem> name_problems;
  if (o.top_p_rule && s.framework == Framework::llama_cpp && *o.top_p_rule == "llama.cpp") {
    s.top_p_rule = TopPRule::llama_cpp;
  } else if (o.top_p_rule) {
    const auto rule = check_top_p_rule(*o.top_p_rule);
    if (rule.value) s.top_p_rule = *rule.value;
    else name_problems.push_back(*rule.problem);
  }
  if (o.rng && s.framework == Framework::llama_cpp && *o.rng == "llama.cpp") {
    s.rng = Rng::llama_cpp;
  } else if (o.rng) {
    const auto rng = check_rng(*o.rng);
    if (rng.value) s.rng = *rng.value;
    else name_problems.push_back(*rng.problem);
  }
  const auto problems = check_run_params(p, std::move(name_problems));
  if (!problems.empty()) throw UsageError(describe_problem(problems.front(), flag_of(problems.front().field)));
  return p;
}

// The controls' texts encoded by the framework's rule with the chosen model's tokenizer (the one the
// engine will load), before the engine loads: a bad text is refused in milliseconds. Each text's
// ids are said on stderr, since generate writes no evidence to record them.
void encode_flag_texts(RunParams& p, const ModelChoice& model, std::ostream& err) {
  if (p.sampling.controls.texts.empty()) return;
  const ModelFiles files = resolve_chosen_model(model);
  const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(files.vocab, files.merges);
  const std::vector<ControlText> written = p.sampling.controls.texts;
  if (const auto refused = encode_control_texts(p, tokenizer))
    throw UsageError(flag_of(refused->control) + "[" + std::to_string(refused->entry) + "] = " + nlohmann::json(refused->text).dump() +
                     " is not allowed; allowed: " + refused->allowed);
  const auto problems = check_run_params(p);
  if (!problems.empty()) throw UsageError(describe_problem(problems.front(), flag_of(problems.front().field)));
  const char* rule = control_text_rule(p.sampling.framework).name;
  for (size_t i = 0; i < written.size(); ++i)
    err << "text: " << flag_of(written[i].control) << "[" << written[i].entry << "] " << nlohmann::json(written[i].text).dump()
        << " -> " << nlohmann::json(p.sampling.controls.texts[i].ids).dump() << " by " << rule << "\n";
}

// A prompt is text to continue; a few KB at most fill GPT-2's 1,024-token context (the context
// check refuses longer ones later). The limit is experiment files' (1 MiB), so an endless pipe
// ends there instead of filling memory.
inline constexpr uint64_t kMaxPromptBytes = kMaxExperimentBytes;

// --prompt TEXT, --prompt - (standard input) or --prompt-file PATH: exactly one. The text is used
// as read, trailing newline included: the prompt is exactly the bytes given.
std::string prompt_from(const GenerateOptions& o, Console& io) {
  if (o.prompt.has_value() == o.prompt_file.has_value())
    throw UsageError(std::string(o.prompt ? "--prompt and --prompt-file both give the prompt; give one"
                                          : "give the text to continue: --prompt TEXT, --prompt - (standard input) or --prompt-file PATH"));
  if (o.prompt && *o.prompt != kStdinPath) return *o.prompt;
  const std::string flag = o.prompt ? "--prompt -" : "--prompt-file " + *o.prompt_file;
  const BoundedRead read = o.prompt ? read_bounded(io.in, kMaxPromptBytes) : read_bounded(*o.prompt_file, kMaxPromptBytes);
  if (!read.ok()) throw UsageError(flag + ": " + read.problem + "; give a text file of at most 1 MiB holding the prompt");
  if (read.text.empty()) throw UsageError(flag + ": empty; the prompt must hold at least one character");
  return read.text;
}

}  // namespace

void setup_generate(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Generate a continuation of --prompt with GPT-2 (the article's loop: forward -> sampler chain\n"
      "-> pick -> stop at EOS or the cap). Prints prompt + continuation, or the new ids with --ids.\n"
      "Mode: greedy (argmax) unless a sampling flag (--temperature, --top-k, --top-p, --seed,\n"
      "--sampler-order, --top-p-rule, --rng) is given; --temperature 0 is greedy. A sampled run\n"
      "without --seed uses seed 0, so every run is reproducible.\n"
      "KV cache: generate uses it unless --no-cache, while experiment files default to use_cache:\n"
      "false (recompute, the article's); both give the same tokens (run --check-equivalence).\n"
      "llama.cpp's spellings work too: -p, -n, -s, --temp.");
  add_model_flags(*cmd, o->model);
  cmd->add_option("--prompt,-p", o->prompt, "Text to continue; - reads it from standard input (at most 1 MiB)");
  cmd->add_option("--prompt-file", o->prompt_file, "Read the text to continue from this file (at most 1 MiB, used as is)")
      ->type_name("PATH");
  cmd->add_option("--max-new-tokens,-n", o->max_new_tokens, "Cap on new tokens (0: only the first prediction)")
      ->capture_default_str();
  cmd->add_flag("--no-cache", o->no_cache,
                "Recompute the whole sequence every step (the article's use_cache=False) [default: the KV cache;\n"
                "experiment files default to use_cache false]");
  cmd->add_flag("--ids", o->ids, "Print only the new token ids as a JSON array");
  cmd->add_flag("--stream", o->stream,
                "Print the text as the tokens arrive (the default when stdout is a terminal; not with --ids)");
  cmd->add_option("--threads", o->threads,
                  "Cores: BLAS threads of each decoding step where the start-up probe proves they keep the\n"
                  "bits (libtorch stays on one intra-op thread); the output does not depend on it\n"
                  "[default: the CPUs this process may use (affinity, cgroup quota), at most 8]");
  add_numerics_flags(*cmd, o->numerics);
  cmd->add_flag("--greedy", o->greedy, "Argmax every step (the default when no sampling flag is given)");
  cmd->add_option("--temperature,--temp", o->temperature, "Divide logits by T >= 0 (0: greedy) [default 1 when sampling]");
  cmd->add_option("--top-k", o->top_k, "Keep the k largest logits (0: off) [default 0]");
  cmd->add_option("--top-p", o->top_p, "Nucleus: keep the smallest set reaching p, p in (0, 1] (1: off) [default 1]");
  cmd->add_option("--seed,-s", o->seed, "Seed of the run's CPU generator: an integer in [0, 2^64) [default 0]")
      ->type_name("UINT64");
  cmd->add_option("--sampler-order", o->sampler_order,
                  "Stages in order, comma-separated, from temperature,top_k,top_p [default temperature,top_k,top_p;\n"
                  "llama.cpp's default puts temperature last: top_k,top_p,temperature]");
  cmd->add_option("--top-p-rule", o->top_p_rule,
                  "article (the article's top_p_filter) | hf (Hugging Face's TopPLogitsWarper) [default article]");
  cmd->add_option("--rng", o->rng,
                  "torch (torch::multinomial, the article's draw) | portable (the same race over std::mt19937) "
                  "[default torch]");
  cmd->add_option("--framework", o->framework,
                  "article | hf | llama.cpp: that framework's stages, rules, order, RNG and defaults\n"
                  "(docs/sampling.md); the flags given override its defaults [default article]");
  for (const ControlKey& k : control_keys()) {
    const std::string key = k.key;
    cmd->add_option_function<std::string>(
        flag_of(key), [o, key](const std::string& text) { o->controls[key] = text; },
        std::string(owners_of(k)) + " " + key + " (JSON): " + control_allowed(key));
  }
  on_verb(*cmd, ctx, [o, &ctx] {
    GenerateRequest request;
    request.params = run_params_from(*o);
    request.model = o->model;
    encode_flag_texts(request.params, o->model, ctx.io.err);
    request.prompt = prompt_from(*o, ctx.io);
    request.threads = o->threads ? checked_threads("--threads", *o->threads) : default_threads();
    request.numerics = numerics_request_from(o->numerics);
    request.numerics.threads_asked = o->threads;
    request.ids = o->ids;
    if (o->ids && o->stream) throw UsageError("--stream cannot be combined with --ids (the ids are one JSON array)");
    request.stream = !o->ids && (o->stream || ::isatty(STDOUT_FILENO) == 1);
    ctx.exit_code = ctx.engine.generate(request, ctx.io);
  });
}

}  // namespace genrepro::cli
