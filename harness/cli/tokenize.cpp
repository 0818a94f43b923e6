// genrepro tokenize: GPT-2's token ids for a text, or the text for token ids.
#include <cstdlib>
#include <sstream>
#include <optional>
#include <string>

#include "cli/verbs.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "model/model_files.hpp"
#include "tokenizer/token_lines.hpp"
#include "tokenizer/tokenizer.hpp"

namespace genrepro::cli {

namespace {

struct TokenizeOptions {
  std::optional<std::string> model;  // --model DIR
  std::optional<std::string> text;   // TEXT
  std::optional<std::string> input;  // --input FILE ("-" = standard input)
  bool decode = false;
};

// Where the tokenizer files are: --model DIR names a directory holding them (a model directory,
// or just GPT-2's vocab.json/merges.txt or encoder.json/vocab.bpe); without it, the model every
// other verb would use (harness/model/model_files.hpp's resolve_model), so `tokenize` and `run` agree.
Gpt2Tokenizer load_tokenizer(const std::optional<std::string>& model_flag, Console& io) {
  if (model_flag) return Gpt2Tokenizer::from_directory(*model_flag);
  const ModelFiles files = resolve_model({std::nullopt, default_tokenizer_dir(), default_cache_dir()});
  io.err << files.source_note << "\n";
  return Gpt2Tokenizer::from_files(files.vocab, files.merges);
}

void run_tokenize(const TokenizeOptions& o, Console& io) {
  if (o.text.has_value() == o.input.has_value()) {
    throw UsageError(o.text ? "pass TEXT or --input FILE, not both" : "pass TEXT or --input FILE (see 'genrepro tokenize --help')");
  }
  // The input is read (and bounded) before the tokenizer loads: a bad --input costs nothing.
  std::optional<BoundedRead> input;
  if (o.input) {
    const bool from_stdin = *o.input == kStdinPath;
    input = from_stdin ? read_bounded(io.in, kMaxTokenizeInputBytes) : read_bounded(*o.input, kMaxTokenizeInputBytes);
    if (!input->ok())
      throw UsageError("--input '" + *o.input + "': " + input->problem + "; pass a JSON-lines file (- for standard input)");
  }
  const Gpt2Tokenizer tokenizer = load_tokenizer(o.model, io);
  if (o.text) {
    if (o.decode) {
      io.out << tokenizer.decode(parse_id_array(*o.text, "--decode TEXT")) << '\n';
    } else {
      io.out << ids_to_json(tokenizer.encode(*o.text)) << '\n';
    }
    return;
  }
  // Read whole and bounded above, like every other input (util/bounded_read.hpp); now line by line.
  std::istringstream in(input->text);
  const std::string name = *o.input == kStdinPath ? "<stdin>" : *o.input;
  if (o.decode) {
    decode_json_lines(tokenizer, in, name, io.out);
  } else {
    encode_json_lines(tokenizer, in, name, io.out);
  }
}

}  // namespace

void setup_tokenize(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize",
      "GPT-2's token ids for a text, or (--decode) the text for token ids.\n"
      "Byte-level BPE exactly as GPT-2 (OpenAI's encoder.py, Hugging Face's GPT2Tokenizer): a literal\n"
      "<|endoftext|> in the text becomes its id (50256). Examples:\n"
      "  genrepro tokenize \"the river bank was\"          -> [1169,7850,3331,373]\n"
      "  genrepro tokenize --decode \"[1169,7850]\"        -> the river\n"
      "  genrepro tokenize --input prompts.jsonl          ({\"text\": ...} per line -> one id array per line)\n"
      "  genrepro tokenize --decode --input ids.jsonl     (one id array per line -> {\"text\": ...} per line)\n"
      "--decode TEXT prints the exact bytes (a token sequence may end inside a UTF-8 character);\n"
      "--decode --input writes JSON, which shows such bytes as U+FFFD. See docs/tokenizer.md.");
  cmd->add_option("TEXT", o->text, "The text to encode, or with --decode a JSON array of ids like [1169,7850]");
  cmd->add_option("--model", o->model,
                  "Directory with vocab.json + merges.txt (or encoder.json + vocab.bpe)\n"
                  "[default: the model other verbs use: $GENREPRO_MODEL, the HF cache's gpt2, else the tiny fixture]")
      ->type_name("DIR");
  cmd->add_option("--input", o->input,
                  "JSON-lines file (- for standard input): {\"text\": \"...\"} per line, or with --decode\n"
                  "a JSON array of ids per line; output is one line per input line, in order")
      ->type_name("PATH");
  cmd->add_flag("--decode", o->decode, "Go from ids to text");
  on_verb(*cmd, ctx, [o, &ctx] {
    run_tokenize(*o, ctx.io);
    ctx.exit_code = 0;
  });
}

}  // namespace genrepro::cli
