// genrepro fixture: writes a fixture model (HF layout, real GPT-2 tokenizer, deterministic weights).
#include <chrono>
#include <filesystem>
#include <string>

#include "cli/flag_kinds.hpp"
#include "cli/verbs.hpp"
#include "util/errors.hpp"
#include "model/fixture_model.hpp"
#include "model/model_files.hpp"
#include "util/progress.hpp"

namespace genrepro::cli {

namespace {

struct FixtureOptions {
  std::string out;
  std::string preset = "tiny";
  std::string tokenizer_dir;  // empty: default_tokenizer_dir()
  bool force = false;
};

bool is_nonempty_dir(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) && !std::filesystem::is_empty(path, ec);
}

void run_fixture(const FixtureOptions& o, Console& io) {
  const FixturePreset preset = parse_fixture_preset(o.preset);
  check_output_directory("--out", o.out);
  if (is_nonempty_dir(o.out) && !o.force)
    throw UsageError("--out " + o.out + " is not empty; pass --force to overwrite its model files, or choose "
                     "another directory");
  const std::string tokenizer_dir = o.tokenizer_dir.empty() ? default_tokenizer_dir() : o.tokenizer_dir;
  // The big preset takes a while (~500 MB of weights). A person at a terminal sees one line
  // redrawn in place and erased at the end; a log gets a line at most every kLogInterval (as run's
  // progress), never one line per tensor (160 for gpt2-124m-shape).
  const bool live = progress_wanted(io.err_is_terminal);
  const auto start = std::chrono::steady_clock::now();
  auto last_log = start;
  bool drawn = false;
  write_fixture_model(o.out, preset, tokenizer_dir, [&](const std::string& step) {
    if (live) {
      io.err << "\rfixture: " << step << "\x1b[K" << std::flush;
      drawn = true;
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_log < kLogInterval) return;
    io.err << "fixture: " << step << "\n" << std::flush;
    last_log = now;
  });
  if (drawn) io.err << "\r\x1b[K" << std::flush;
  io.out << "wrote fixture model '" << to_string(preset) << "' to " << o.out << "\n";
}

}  // namespace

void setup_fixture(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<FixtureOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fixture",
      "Write a fixture model: a Hugging Face layout directory (config.json, model.safetensors,\n"
      "vocab.json, merges.txt) with GPT-2's real tokenizer and deterministic weights from a portable\n"
      "PRNG, byte-identical on every machine (docs/fixture-models.md).");
  cmd->add_option("--out", o->out, "Directory to write (created if missing)")->required();
  cmd->add_option("--preset", o->preset,
                  "tiny (2 layers, width 64, context 128, real 50,257-token vocabulary; for tests) or\n"
                  "gpt2-124m-shape (GPT-2 small's exact shapes, ~550 MB; for benchmarks) or\n"
                  "near-tie (tiny with planted near-ties whose tokens flip across BLAS kernels; docs/sensitivity.md)")
      ->capture_default_str();
  cmd->add_option("--tokenizer-dir", o->tokenizer_dir,
                  "Where GPT-2's vocab.json/merges.txt (or encoder.json/vocab.bpe) are copied from\n"
                  "[default: $GENREPRO_TOKENIZER_DIR or the files scripts/setup.sh installed]");
  cmd->add_flag("--force", o->force, "Overwrite the model files in a non-empty --out directory");
  on_verb(*cmd, ctx, [o, &ctx] {
    run_fixture(*o, ctx.io);
    ctx.exit_code = 0;
  });
}

}  // namespace genrepro::cli
