// genrepro sample: a sampler chain (any framework, any controls, a seed, a history) applied to
// logits read from a file, without a model and without libtorch (docs/sample.md).
#include <charconv>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/logits_rows.hpp"
#include "cli/verbs.hpp"
#include "params/experiment_file.hpp"
#include "params/framework_params.hpp"
#include "sampling/presets.hpp"
#include "tokenizer/token_lines.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro::cli {

namespace {

constexpr int64_t kDefaultEos = 50256;  // GPT-2's <|endoftext|>
constexpr int64_t kDefaultMaxKept = 64;

struct SampleOptions {
  std::string input;   // FILE, or - for standard input
  std::string params;  // a run entry's JSON, or @FILE
  std::optional<std::string> history;
  bool no_accept = false;
  int64_t eos = kDefaultEos;
  int64_t max_kept = kDefaultMaxKept;
};

// The run entry's keys that belong to the generation loop, which `sample` does not run.
const std::vector<std::string> kLoopKeys = {"max_new_tokens", "stop_at_eos", "use_cache", "replicas"};

// --params: where the entry came from (for messages) and its text.
struct ParamsText {
  std::string label;  // "--params" or "--params @FILE"
  std::string text;
};

ParamsText params_text(const std::string& value) {
  if (value.rfind('@', 0) != 0) return {"--params", value};
  const std::string path = value.substr(1);
  const BoundedRead read = read_bounded(path, kMaxExperimentBytes, Expect::json_object);
  if (!read.ok()) throw UsageError("--params @" + path + ": " + read.problem + "; give a file holding one run entry (a JSON object)");
  return {"--params @" + path, read.text};
}

// An experiment parser's message about runs[0] of the one-entry experiment, said about --params:
// "--params: runs[0].temperature = -1 ..." -> "--params: temperature = -1 ...".
std::string about_params(const std::string& message, const std::string& label) {
  const std::string entry = label + ": runs[0]";
  if (message.rfind(entry + ".", 0) == 0) return label + ": " + message.substr(entry.size() + 1);
  if (message.rfind(entry, 0) == 0) return label + message.substr(entry.size());
  return message;
}

// The run entry through the experiment parser (the same keys, defaults and checks as a run entry
// of an experiment file), as the one run of an experiment in memory.
SamplingParams parse_params(const std::string& value) {
  const ParamsText given = params_text(value);
  const JsonParseOutcome parsed = parse_json_text(given.text);
  if (!parsed.ok()) throw UsageError(given.label + ": " + parsed.problem + "; give one run entry, e.g. {\"mode\": \"greedy\"}");
  if (parsed.value.is_object())
    for (const std::string& key : kLoopKeys)
      if (parsed.value.contains(key))
        throw UsageError(given.label + ": " + key + ": is a key of the generation loop, which sample does not run (it applies the chain to "
                         "the logits given); remove it");
  nlohmann::json experiment = nlohmann::json::object();
  experiment["name"] = "sample";
  experiment["prompts"] = nlohmann::json::array({"sample"});
  experiment["runs"] = nlohmann::json::array({parsed.value});
  ExperimentSpec spec;
  try {
    spec = parse_experiment(experiment.dump(), given.label);
  } catch (const SpecError& e) {
    throw SpecError(about_params(e.what(), given.label));
  }
  if (spec.runs.size() != 1)
    throw UsageError(given.label + ": expands to " + std::to_string(spec.runs.size()) +
                     " runs (a list where one value was meant); allowed: one value per key: sample runs one chain");
  const SamplingParams s = spec.runs.front().params.sampling;
  if (!s.controls.texts.empty()) {
    const ControlText& t = s.controls.texts.front();
    throw UsageError(given.label + ": " + t.control + "[" + std::to_string(t.entry) + "] = " + nlohmann::json(t.text).dump() +
                     " is a text; allowed: token ids (sample has no tokenizer; 'genrepro tokenize' gives the ids)");
  }
  return s;
}

std::vector<int64_t> parse_history(const std::optional<std::string>& text) {
  if (!text) return {};
  std::vector<int64_t> ids = parse_id_array(*text, "--history");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0)
      throw UsageError("--history: element " + std::to_string(i) + " = " + std::to_string(ids[i]) + " is not allowed; allowed: token ids >= 0");
  return ids;
}

// Every id the chain will look up lies inside the rows' vocabulary.
void check_ids(const SamplingParams& s, const std::vector<int64_t>& history, const std::string& input, int64_t vocab) {
  const std::string allowed = "; allowed: ids from 0 to " + std::to_string(vocab - 1) + " (the rows of " + input + " hold " +
                              std::to_string(vocab) + " logits)";
  for (size_t i = 0; i < history.size(); ++i)
    if (history[i] >= vocab)
      throw UsageError("--history: element " + std::to_string(i) + " = " + std::to_string(history[i]) + " is not allowed" + allowed);
  if (const auto outside = sampling::control_id_outside(s.controls, vocab))
    throw UsageError("--params: " + *outside + ", which is not allowed" + allowed);
}

// ---------------------------------------------------------------- output

// Shortest text that reads back as the same float32 (or double): 0.5714286, not 0.571428596973419.
template <class T>
std::string number(T v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}

std::string ids_json(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "]";
}

// One output line: {"index", "stages": [{"stage", "kept", "ids"?}], "kept", "probs": [{"id", "p"}],
// "pick", "draw"?}. Lists of ids and probabilities are written when they hold at most max_kept.
std::string step_json(size_t index, const sampling::ChainStep& step, int64_t max_kept) {
  const auto listed = [max_kept](size_t n) { return static_cast<int64_t>(n) <= max_kept; };
  std::string out = "{\"index\":" + std::to_string(index) + ",\"stages\":[";
  for (size_t i = 0; i < step.stages.size(); ++i) {
    const sampling::StageOutcome& s = step.stages[i];
    out += (i ? "," : "") + std::string("{\"stage\":\"") + s.stage + "\",\"kept\":" + std::to_string(s.kept.size());
    if (listed(s.kept.size())) out += ",\"ids\":" + ids_json(s.kept);
    out += "}";
  }
  out += "],\"kept\":" + std::to_string(step.final.size()) + ",\"probs\":[";
  const size_t shown = std::min(step.final.size(), static_cast<size_t>(std::max<int64_t>(max_kept, 0)));
  for (size_t i = 0; i < shown; ++i)
    out += (i ? "," : "") + std::string("{\"id\":") + std::to_string(step.final[i].id) + ",\"p\":" + number(step.final[i].p) + "}";
  out += "]";
  if (step.pick) {
    out += ",\"pick\":" + std::to_string(step.pick->token);
    if (const auto& m = step.pick->margin)
      out += ",\"draw\":{\"rule\":\"" + m->rule + "\",\"margin\":" + number(m->margin) + ",\"runner_up\":" + std::to_string(m->runner_up) + "}";
  }
  return out + "}";
}

// One stderr line: the chain that ran, so the output can be read without the params at hand.
std::string chain_note(const SamplingParams& s, const sampling::Chain& chain, const LogitsRows& logits, bool accept) {
  std::string stages;
  for (const std::string& name : chain.stage_names()) stages += (stages.empty() ? "" : ", ") + name;
  std::string draw = chain.draw_name();
  if (s.rng == Rng::torch && draw == "exponential_race")
    draw += " (rng torch: the portable race, which draws as torch.multinomial does)";
  return "sample: " + std::to_string(logits.rows.size()) + " rows of " + std::to_string(logits.rows.front().size()) + " logits (" +
         logits.format + "); framework " + to_string(s.framework) + ", stages [" + stages + "], draw " + draw +
         (draw == "argmax" ? "" : ", seed " + std::to_string(s.seed)) + (accept ? "" : ", history fixed (--no-accept)");
}

void run_sample(const SampleOptions& o, Console& io) {
  // Every flag first, then the input: a bad --params costs no read.
  const SamplingParams s = parse_params(o.params);
  const std::vector<int64_t> history = parse_history(o.history);
  const LogitsRows logits = read_logits(o.input, io.in);
  const std::string name = o.input == kStdinPath ? "<stdin>" : o.input;
  check_ids(s, history, name, static_cast<int64_t>(logits.rows.front().size()));
  sampling::Chain chain = sampling::make_chain(s, {history, o.eos});
  for (size_t i = 0; i < logits.rows.size(); ++i) {
    sampling::ChainStep step;
    try {
      step = chain.step(logits.rows[i]);
    } catch (const NumericsError& e) {
      throw NumericsError(name + ": row " + std::to_string(i) + ": " + e.what());
    }
    io.out << step_json(i, step, o.max_kept) << "\n";
    if (!o.no_accept && step.pick) chain.accept(step.pick->token);
  }
  // After the rows, so that a row the chain refuses leaves its one error line alone on stderr.
  io.err << chain_note(s, chain, logits, !o.no_accept) << "\n";
}

constexpr const char* kHelp =
    "Apply a sampler chain to logits read from a file, without a model and without libtorch.\n"
    "The chain is any run entry of an experiment file: the article's (temperature, top_k, top_p,\n"
    "sampler_order, top_p_rule), Hugging Face's or llama.cpp's (\"framework\" and its controls), with\n"
    "the same keys, defaults and checks (docs/experiments.md, docs/sampling.md).\n"
    "\n"
    "Input (FILE, or - for standard input): one JSON array of numbers per line, or a .npy file as\n"
    "numpy.save writes float32 ('<f4', C order, shape (V,) or (N, V)). Every row is one logits\n"
    "vector over the same vocabulary; numbers are rounded to float32; NaN, infinity, ragged or empty\n"
    "rows, other dtypes and shapes are refused (exit 2, one line naming the file, row and element).\n"
    "\n"
    "Rows are steps of one sequence: one chain, seeded once, draws for row 0, then row 1, ...; the\n"
    "token it picks is appended to the history (--history, the prompt the penalties and n-gram bans\n"
    "read) before the next row, as in generation (--no-accept keeps the history as given).\n"
    "rng torch draws with the portable race (params/portable_rng.hpp), which reproduces\n"
    "torch.multinomial's draws; rng portable is the same race; llama.cpp draws with its dist.\n"
    "\n"
    "Output: one JSON line per row: index; stages: each stage that ran with the count of tokens it\n"
    "kept (logit above -infinity) and their ids when at most --max-kept; kept: tokens with p > 0 in\n"
    "the final distribution; probs: those tokens' {id, p}, most probable first, at most --max-kept;\n"
    "pick: the token drawn (greedy: the argmax, p 1); draw: how close the draw came to another token\n"
    "(rule exponential_race: margin = ln of the best ratio over the runner-up's; inverse_cdf: the\n"
    "distance in u), absent when no other token could be drawn. stderr, after the rows: one line\n"
    "naming the chain that ran.\n"
    "\n"
    "Example (llama.cpp's test_top_p: the logits of probabilities 0.1, 0.2, 0.3, 0.4 and top-p 0.7;\n"
    "the output is one line, wrapped here):\n"
    "  echo '[-2.3025851, -1.609438, -1.2039728, -0.9162907]' | \\\n"
    "    genrepro sample - --params '{\"mode\": \"sample\", \"top_p\": 0.7, \"seed\": 42}'\n"
    "  {\"index\":0,\"stages\":[{\"stage\":\"temperature\",\"kept\":4,\"ids\":[0,1,2,3]},{\"stage\":\"top_k\",\"kept\":4,\n"
    "   \"ids\":[0,1,2,3]},{\"stage\":\"top_p\",\"kept\":2,\"ids\":[2,3]}],\"kept\":2,\"probs\":[{\"id\":3,\"p\":0.5714286},\n"
    "   {\"id\":2,\"p\":0.42857146}],\"pick\":3,\"draw\":{\"rule\":\"exponential_race\",\"margin\":1.1806294378693238,\n"
    "   \"runner_up\":2}}\n"
    "More: a .npy of rows, the entry in a file, a prompt the penalties read; llama.cpp's preset:\n"
    "  genrepro sample logits.npy --params @entry.json --history '[1169, 7850, 3331, 373]'\n"
    "  genrepro sample logits.jsonl --params '{\"mode\": \"sample\", \"framework\": \"llama.cpp\", \"seed\": 7}'";

}  // namespace

void setup_sample(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<SampleOptions>();
  CLI::App* cmd = app.add_subcommand("sample", kHelp);
  cmd->add_option("FILE", o->input, "Logits: JSON lines (one array per row) or .npy float32; - for standard input")
      ->required()
      ->type_name("PATH");
  cmd->add_option("--params", o->params,
                  "One run entry of an experiment file as JSON, or @FILE holding it, e.g.\n"
                  "'{\"mode\": \"sample\", \"framework\": \"hf\", \"top_k\": 20, \"repetition_penalty\": 1.3, \"seed\": 1}'\n"
                  "(loop keys max_new_tokens, stop_at_eos, use_cache, replicas are refused; ids only, no texts)")
      ->required()
      ->type_name("JSON");
  cmd->add_option("--history", o->history,
                  "The sequence before row 0, as a JSON array of token ids (the prompt): what repetition penalties,\n"
                  "n-gram bans, sequence biases and minimum lengths read [default: empty]")
      ->type_name("IDS");
  cmd->add_flag("--no-accept", o->no_accept, "Keep the history as given instead of appending each row's pick");
  cmd->add_option("--eos", o->eos, "The end-of-text token id (Hugging Face's min_length, min_new_tokens, bad_words_ids)")
      ->capture_default_str();
  cmd->add_option("--max-kept", o->max_kept, "List kept ids and probabilities only up to this many a row")
      ->capture_default_str();
  on_verb(*cmd, ctx, [o, &ctx] {
    run_sample(*o, ctx.io);
    ctx.exit_code = kExitOk;
  });
}

}  // namespace genrepro::cli
