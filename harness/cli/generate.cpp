// genrepro generate: one generation run from the command line, greedy or sampled, printing the
// prompt and its continuation (or, with --ids, the new token ids as a JSON array).
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/flag_kinds.hpp"
#include "cli/llama_flags.hpp"
#include "cli/numerics_flags.hpp"
#include "evidence/checkpoint.hpp"
#include "evidence/evidence.hpp"
#include "evidence/environment.hpp"
#include "cli/verbs.hpp"
#include "plan/run_plan.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "params/framework_params.hpp"
#include "params/param_table.hpp"
#include "params/sampling_params.hpp"
#include "util/joined.hpp"
#include "util/text_excerpt.hpp"

namespace genrepro::cli {

namespace {

// What `generate --json` prints names its shape (docs/evidence-format.md, "generate --json").
constexpr const char* kGenerateJsonSchema = "genrepro.generate/1";

// A flag of the parameter table as given: its value as the row's JSON and the spelling used.
struct GivenFlag {
  nlohmann::json value;  // numbers as CLI11 read them; the rest from `text` (given_values)
  std::string text;      // the flag's text as typed
  const FlagSpelling* spelling = nullptr;
};

struct GenerateOptions {
  ModelChoice model;
  std::optional<std::string> prompt;       // "-": standard input
  std::optional<std::string> positional;   // the prompt as the one positional argument
  std::optional<std::string> prompt_file;  // a file holding the prompt
  bool no_cache = false;
  bool ids = false;
  bool json = false;  // the run as one JSON object (JSON lines with --stream), in evidence terms
  bool stream = false;
  std::optional<int> threads;  // default: the CPUs this process may use (evidence/environment.hpp)
  NumericsFlags numerics;
  LlamaFlags llama;
  bool greedy = false;
  const FlagSpelling* do_sample = nullptr;  // --do-sample (Hugging Face's spelling of "sample")
  // Every other flag of the parameter table that was given, by key, as the row's JSON.
  std::map<std::string, GivenFlag> given;
};

// The flag each RunParams field comes from, for error lines: the row's primary spelling.
std::string flag_of(const std::string& field) {
  const ParamRow* row = find_param(field);
  if (row && row->primary_flag()) return row->primary_flag();
  std::string flag = "--" + field;
  for (auto& c : flag)
    if (c == '_') c = '-';
  return flag;
}

bool any_sampling_flag(const GenerateOptions& o) {
  if (o.do_sample) return true;
  for (const auto& [key, flag] : o.given)
    if (param(key).sampling_only) return true;
  return false;
}

// The framework's name as a user writes it after --framework, and what its rules are, for notes.
std::string rules_of(Framework f) {
  switch (f) {
    case Framework::article: return "the article's loop (temperature -> top_k -> top_p, torch's draw)";
    case Framework::hf: return "Hugging Face generate()'s processors and warpers";
    case Framework::llama_cpp: return "llama.cpp's sampler chain (temperature last, its dist draw)";
  }
  return "";
}

// Flags spelled as another framework spells them while this run's rules are another's: said in
// one line, with the switch, since the same words mean other rules there ("-s 42 --temp 0.7"
// from llama.cpp runs the article's order and draw unless --framework llama.cpp is given).
void note_foreign_spellings(const GenerateOptions& o, Framework f, std::ostream& err) {
  std::vector<const FlagSpelling*> used = {o.do_sample};
  for (const ParamRow& row : param_table())
    if (const auto it = o.given.find(row.key); it != o.given.end()) used.push_back(it->second.spelling);
  for (FlagOrigin origin : {FlagOrigin::llama_cpp, FlagOrigin::hf}) {
    const Framework theirs = origin == FlagOrigin::hf ? Framework::hf : Framework::llama_cpp;
    if (theirs == f) continue;
    std::vector<std::string> spellings;
    for (const FlagSpelling* s : used)
      if (s && s->origin == origin) spellings.push_back(s->text);
    if (spellings.empty()) continue;
    err << "genrepro: note: " << joined(spellings, ", ") << (spellings.size() == 1 ? " is " : " are ") << to_string(theirs)
        << (spellings.size() == 1 ? "'s spelling" : "'s spellings") << "; this run uses " << rules_of(f) << "; add --framework "
        << to_string(theirs) << " for " << to_string(theirs) << "'s rules and defaults\n";
  }
}

// A control another framework owns, refused with the fix: "; add --framework llama.cpp".
std::string framework_fix(const ParamProblem& problem, Framework f) {
  const ParamRow* row = find_control_key(problem.field);
  if (!row || framework_has(f, *row)) return "";
  if (row->has(Framework::hf) && row->has(Framework::llama_cpp)) return "; add --framework hf or --framework llama.cpp";
  return std::string("; add --framework ") + (row->has(Framework::hf) ? "hf" : "llama.cpp");
}

// The flags given as text (a seed, a name, a stage list, a control's JSON) as their row's JSON.
// A framework's sampler order is read as names; the article's has its own reading and words
// (parse_sampler_order), kept for it.
void read_texts(GenerateOptions& o, Framework framework) {
  for (auto& [key, flag] : o.given) {
    const ParamRow& row = param(key);
    if (!flag.value.is_null()) continue;
    if (row.kind == ParamKind::seed) {
      const auto seed = parse_seed(flag.text);
      if (!seed) throw UsageError("--seed = " + flag.text + " is not allowed; allowed: " + seed_allowed());
      flag.value = *seed;
    } else if (row.kind == ParamKind::stages) {
      flag.value = nlohmann::json::array();
      if (framework == Framework::article) {
        try {
          for (SamplerStage stage : parse_sampler_order(flag.text)) flag.value.push_back(to_string(stage));
        } catch (const SpecError& e) {
          throw UsageError(std::string("--sampler-order: ") + e.what());
        }
      } else {
        std::string item;
        std::istringstream in(flag.text);
        while (std::getline(in, item, ',')) flag.value.push_back(item);
      }
    } else if (row.is_control()) {
      flag.value = nlohmann::json::parse(flag.text, nullptr, /*allow_exceptions=*/false);
      if (flag.value.is_discarded())
        throw UsageError(flag_of(key) + " = " + short_value(flag.text) + " is not allowed; allowed: " + row.allowed() + " (the value is read as JSON)");
    } else {
      flag.value = flag.text;
    }
  }
}

// Flags -> RunParams, every value checked (check_run_params) before a model is even located.
// Each value goes through its row's reader, the one experiment files and evidence use.
RunParams run_params_from(GenerateOptions o) {
  for (const auto& [key, flag] : o.given)
    if (o.greedy && find_control_key(key) && param(key).sampling_only)
      throw UsageError("--greedy cannot be combined with " + flag_of(key) + " (it only acts when sampling); drop --greedy to sample, or " +
                       flag_of(key) + " for greedy");
  if (o.greedy && any_sampling_flag(o))
    throw UsageError("--greedy cannot be combined with --temperature, --top-k, --top-p, --seed, --sampler-order, "
                     "--top-p-rule, --rng or --do-sample; drop --greedy to sample, or the sampling flags for greedy");
  RunParams p;
  SamplingParams& s = p.sampling;
  // --framework: that framework's defaults first; every flag given overrides them.
  Framework framework = Framework::article;
  if (const auto it = o.given.find("framework"); it != o.given.end()) {
    const auto f = check_framework(it->second.text);
    if (!f.value) throw UsageError(describe_problem(*f.problem, "--framework"));
    framework = *f.value;
  }
  read_texts(o, framework);
  // Mode: any sampling flag means sample, --temperature 0 greedy (as many APIs do). With none,
  // the framework's own default: llama.cpp samples (at T 0.8), generate() of GPT-2 and the
  // article's first loop are greedy.
  const auto temperature = o.given.find("temperature");
  const bool temperature_zero = temperature != o.given.end() && temperature->second.value.is_number() &&
                                temperature->second.value.get<double>() == 0.0;
  const bool sample = !o.greedy && !temperature_zero && (any_sampling_flag(o) || framework == Framework::llama_cpp);
  s.mode = sample ? DecodeMode::sample : DecodeMode::greedy;
  resolve_framework(s, framework);
  p.use_cache = !o.no_cache;
  // The values, in the table's order; an unknown name is reported in check_run_params' order.
  std::vector<ParamProblem> name_problems;
  for (const ParamRow& row : param_table()) {
    const auto it = o.given.find(row.key);
    if (it == o.given.end() || std::string(row.key) == "framework") continue;
    const std::optional<ValueProblem> problem = row.read(p, it->second.value);
    if (!problem) continue;
    const std::string allowed = problem->allowed.empty() ? row.allowed() : problem->allowed;
    if (row.kind == ParamKind::name) {
      name_problems.push_back({row.key, problem->shown ? *problem->shown : it->second.value.dump(), allowed});
      continue;
    }
    const std::string flag = flag_of(row.key);
    if (row.is_control())
      throw UsageError(flag + problem->at + " = " + short_value(problem->at.empty() ? it->second.text : problem->value.dump()) +
                       " is not allowed; allowed: " + allowed + " (the value is read as JSON)");
    throw UsageError(describe_problem({row.key, problem->shown ? *problem->shown : it->second.value.dump(), allowed}, flag));
  }
  const auto problems = check_run_params(p, std::move(name_problems));
  if (!problems.empty())
    throw UsageError(describe_problem(problems.front(), flag_of(problems.front().field)) + framework_fix(problems.front(), framework));
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

// --prompt TEXT (or the one positional argument), - for standard input, or --prompt-file PATH:
// exactly one. The text is used as read, trailing newline included: the prompt is exactly the
// bytes given.
std::string prompt_from(const GenerateOptions& o, Console& io) {
  std::vector<std::string> sources;
  if (o.prompt) sources.push_back("--prompt");
  if (o.positional) sources.push_back("the positional prompt " + quoted_excerpt(*o.positional, 40));
  if (o.prompt_file) sources.push_back("--prompt-file");
  if (sources.empty())
    throw UsageError("give the text to continue: --prompt TEXT, --prompt - (standard input) or --prompt-file PATH "
                     "(also: the text as the one argument, -p TEXT, -f PATH)");
  if (sources.size() > 1) throw UsageError(sources[0] + " and " + sources[1] + " both give the prompt; give one");
  const std::optional<std::string>& inline_text = o.prompt ? o.prompt : o.positional;
  if (inline_text && *inline_text != kStdinPath) return *inline_text;
  const std::string flag = inline_text ? (o.prompt ? "--prompt -" : "-") : "--prompt-file " + *o.prompt_file;
  const BoundedRead read = inline_text ? read_bounded(io.in, kMaxPromptBytes) : read_bounded(*o.prompt_file, kMaxPromptBytes);
  if (!read.ok()) throw UsageError(flag + ": " + read.problem + "; give a text file of at most 1 MiB holding the prompt");
  if (read.text.empty()) throw UsageError(flag + ": empty; the prompt must hold at least one character");
  return read.text;
}

// "(also --temp: llama.cpp's spelling)" for a row's help.
std::string other_spellings(const ParamRow& row) {
  std::vector<std::string> others;
  for (size_t i = 1; i < row.flags.size(); ++i) {
    const FlagSpelling& f = row.flags[i];
    others.push_back(std::string(f.text) + (f.origin == FlagOrigin::hf ? " (Hugging Face's)" : f.origin == FlagOrigin::llama_cpp ? " (llama.cpp's)" : ""));
  }
  return others.empty() ? "" : " [also " + joined(others, ", ") + "]";
}

// Whether `arg` gives the flag spelled `spelling`: "--temp", "--temp=0.7", or "-s42" for a short one.
bool typed_as(const std::string& arg, const std::string& spelling) {
  if (arg == spelling || arg.rfind(spelling + "=", 0) == 0) return true;
  return spelling.size() == 2 && spelling[1] != '-' && arg.size() > 2 && arg.compare(0, 2, spelling) == 0;
}

// Which spelling of each given flag the command line used (the last one typed wins, as its value).
void note_spellings(GenerateOptions& o, const std::vector<std::string>& args) {
  for (auto& [key, flag] : o.given)
    for (const std::string& arg : args)
      for (const FlagSpelling& f : param(key).flags)
        if (typed_as(arg, f.text)) flag.spelling = &f;
}

// A row's flag with every spelling (CLI11 reads them as one option): numbers typed (CLI11 reads
// them, flag_kinds.hpp checks them), everything else kept as text for read_texts.
void add_param_flag(CLI::App& cmd, const std::shared_ptr<GenerateOptions>& o, const ParamRow& row, const std::string& help) {
  const std::string key = row.key;
  std::vector<std::string> names;
  for (const FlagSpelling& f : row.flags) names.push_back(f.text);
  const std::string spellings = joined(names, ",");
  if (!row.is_control() && row.kind == ParamKind::real) {
    cmd.add_option_function<double>(spellings, [o, key](double v) { o->given[key] = {v, "", nullptr}; }, help);
  } else if (!row.is_control() && row.kind == ParamKind::integer) {
    cmd.add_option_function<int64_t>(spellings, [o, key](int64_t v) { o->given[key] = {v, "", nullptr}; }, help);
  } else {
    CLI::Option* opt = cmd.add_option_function<std::string>(
        spellings, [o, key](const std::string& t) { o->given[key] = {nullptr, t, nullptr}; }, help);
    if (row.kind == ParamKind::seed) opt->type_name("UINT64");
  }
}

// ---- --json: the run in evidence-format terms ----

// The one-run experiment that `generate`'s flags describe: every parameter as the evidence writes
// it (params_as_written_json), placed where an experiment file takes it (top_candidates in
// record; a greedy run without the sampling-only keys; an article run without "framework").
// Parsed like any experiment file, so the run is checked and recorded as `run` records it.
ExperimentSpec generate_experiment(const RunParams& p, const std::string& prompt) {
  nlohmann::json entry = nlohmann::json::object();
  nlohmann::json record = nlohmann::json::object();
  const nlohmann::ordered_json written = params_as_written_json(p);
  for (auto it = written.begin(); it != written.end(); ++it) {
    const std::string& key = it.key();
    if (key == "top_candidates") {
      record[key] = it.value();
      continue;
    }
    if (key == "replica") continue;
    const ParamRow* row = find_param(key);
    if (p.sampling.mode == DecodeMode::greedy && row && row->sampling_only) continue;
    entry[key] = it.value();
  }
  const nlohmann::json spec = {{"name", "generate"}, {"prompts", {prompt}}, {"record", record}, {"runs", {entry}}};
  return parse_experiment(spec.dump(), "genrepro generate");
}

// A private scratch directory for the run's evidence, removed with everything in it.
class ScratchEvidence {
 public:
  ScratchEvidence() {
    std::error_code ec;
    std::string dir = (std::filesystem::temp_directory_path(ec) / "genrepro-generate-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) throw Error("generate --json: cannot make a scratch directory under " + dir + "; set TMPDIR to a writable directory");
    dir_ = dir;
  }
  ~ScratchEvidence() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchEvidence(const ScratchEvidence&) = delete;
  ScratchEvidence& operator=(const ScratchEvidence&) = delete;
  std::string file() const { return (dir_ / "evidence.json").string(); }

 private:
  std::filesystem::path dir_;
};

// generate --json: the run goes through `run`'s engine verb (the same loop, records and checks as
// any experiment's run), into scratch evidence, and its record is printed: one object (the run
// record of docs/evidence-format.md, with "schema" and the "model" block), or with --stream JSON
// lines, one step record each, then the run without its steps. The lines are written when the
// run has finished.
int generate_json(const GenerateRequest& g, bool lines, VerbContext& ctx) {
  RunRequest r;
  r.experiments = {generate_experiment(g.params, g.prompt)};
  r.model = g.model;
  r.threads = g.threads;
  r.numerics = g.numerics;
  r.llama_lib = g.llama_lib;
  r.llama = g.llama;
  const ScratchEvidence scratch;
  r.out = scratch.file();
  r.checkpoint = std::make_shared<CheckpointFile>(CheckpointFile::open(checkpoint_path_for(r.out)));
  r.checkpoint_found = r.checkpoint->read();
  std::ostringstream run_out;  // run's own "wrote ..." line: not for this output
  Console io{ctx.io.in, run_out, ctx.io.err, false, ctx.io.err_is_terminal};
  const int exit = ctx.engine.run(r, io);
  if (exit != kExitOk) return exit;
  const EvidenceFile evidence = read_evidence_file(r.out);
  if (evidence.evidence.runs.size() != 1) throw std::logic_error("generate --json: the run wrote " + std::to_string(evidence.evidence.runs.size()) + " runs");
  nlohmann::ordered_json run = run_to_json(evidence.evidence.runs.front());
  const auto dump = [](const nlohmann::ordered_json& j) { return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::strict); };
  if (lines) {
    for (const auto& step : run["steps"]) ctx.io.out << dump(step) << "\n";
    run.erase("steps");
  }
  nlohmann::ordered_json out = {{"schema", kGenerateJsonSchema}};
  for (auto it = run.begin(); it != run.end(); ++it) out[it.key()] = it.value();
  out["model"] = model_to_json(evidence.evidence.model);
  ctx.io.out << dump(out) << "\n";
  return kExitOk;
}

}  // namespace

void setup_generate(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "Generate a continuation of a prompt with GPT-2 (the article's loop: forward -> sampler chain\n"
      "-> pick -> stop at EOS or the cap). Prints prompt + continuation, or the new ids with --ids.\n"
      "  genrepro generate \"the river bank was\" -n 50\n"
      "  genrepro generate -f prompt.txt --framework llama.cpp --temp 0.7 --top-k 40 -s 42\n"
      "Rules: --framework article (the default) | hf | llama.cpp picks whose sampler chain, order,\n"
      "RNG and defaults run; the flags given override its defaults. Mode: greedy (argmax) unless a\n"
      "sampling flag (--temperature, --top-k, --top-p, --seed, --sampler-order, --top-p-rule, --rng,\n"
      "--do-sample, a sampling control) is given, or the framework is llama.cpp (which samples at\n"
      "T 0.8); --temperature 0 and --greedy are greedy. A sampled run without --seed uses seed 0, so\n"
      "every run is reproducible.\n"
      "KV cache: generate uses it unless --no-cache, while experiment files default to use_cache:\n"
      "false (recompute, the article's); both give the same tokens (run --check-equivalence).\n"
      "llama.cpp's and Hugging Face's spellings work too (-p, -f, -n, -s, --temp, --do-sample, ...);\n"
      "given while another framework's rules apply, they are named on stderr with the switch.");
  add_model_flags(*cmd, o->model);
  cmd->add_option("--prompt,-p", o->prompt, "Text to continue; - reads it from standard input (at most 1 MiB)");
  cmd->add_option("PROMPT", o->positional, "The text to continue, as --prompt takes it");
  cmd->add_option("--prompt-file,-f", o->prompt_file, "Read the text to continue from this file (at most 1 MiB, used as is)")
      ->type_name("PATH");
  cmd->add_flag("--no-cache", o->no_cache,
                "Recompute the whole sequence every step (the article's use_cache=False) [default: the KV cache;\n"
                "experiment files default to use_cache false]");
  cmd->add_flag("--ids", o->ids, "Print only the new token ids as a JSON array");
  cmd->add_flag("--json", o->json,
                "Print the run as one JSON object in evidence terms (docs/evidence-format.md): prompt and new ids,\n"
                "text, stop, and per step the token, its text piece and probability, the nucleus size and the\n"
                "top candidates; with --stream, JSON lines: one step record each, then the run without its steps");
  cmd->add_flag("--stream", o->stream,
                "Print the text as the tokens arrive (the default when stdout is a terminal; not with --ids)");
  cmd->add_option("--threads", o->threads,
                  "Cores: BLAS threads of each decoding step where the start-up probe proves they keep the\n"
                  "bits (libtorch stays on one intra-op thread); the output does not depend on it\n"
                  "[default: the CPUs this process may use (affinity, cgroup quota), at most 8]");
  add_numerics_flags(*cmd, o->numerics);
  add_llama_flags(*cmd, o->llama);
  // The parameter table's flags, every spelling of each (params/param_table.hpp).
  for (const ParamRow& row : param_table()) {
    if (row.flags.empty()) continue;
    if (std::string(row.key) == "mode") {
      cmd->add_flag("--greedy", o->greedy, "Argmax every step (the default with no sampling flag, but for llama.cpp)");
      for (const FlagSpelling& f : row.flags)
        if (f.origin == FlagOrigin::hf)
          cmd->add_flag_callback(f.text, [o, sp = &f] { o->do_sample = sp; },
                                 "Sample (Hugging Face's do_sample=True): with --framework hf, generate()'s defaults T 1, top_k 50");
      continue;
    }
    const std::string help = row.is_control() ? owners_of(row) + " " + row.key + " (JSON): " + row.allowed()
                                              : std::string(row.help) + other_spellings(row);
    add_param_flag(*cmd, o, row, help);
  }
  on_verb(*cmd, ctx, [o, &ctx] {
    GenerateRequest request;
    note_spellings(*o, ctx.args);
    request.params = run_params_from(*o);
    note_foreign_spellings(*o, request.params.sampling.framework, ctx.io.err);
    request.model = o->model;
    encode_flag_texts(request.params, o->model, ctx.io.err);
    request.prompt = prompt_from(*o, ctx.io);
    request.threads = o->threads ? checked_threads("--threads", *o->threads) : default_threads();
    request.numerics = numerics_request_from(o->numerics);
    request.numerics.threads_asked = o->threads;
    const LlamaChoice llama = llama_choice_from(o->llama);
    request.llama_lib = llama.library;
    request.llama = llama.settings;
    request.ids = o->ids;
    if (o->ids && o->stream) throw UsageError("--stream cannot be combined with --ids (the ids are one JSON array)");
    if (o->ids && o->json) throw UsageError("--json cannot be combined with --ids (--json holds the ids; give one of them)");
    if (o->json) {
      ctx.exit_code = generate_json(request, o->stream, ctx);
      return;
    }
    request.stream = !o->ids && (o->stream || ::isatty(STDOUT_FILENO) == 1);
    ctx.exit_code = ctx.engine.generate(request, ctx.io);
  });
}

}  // namespace genrepro::cli
