// genrepro export: the model genrepro would load, written in another engine's format.
#include <memory>
#include <string>

#include "cli/model_choice.hpp"
#include "cli/output_paths.hpp"
#include "cli/verbs.hpp"
#include "model/gguf_export.hpp"
#include "model/model_config.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

struct ExportOptions {
  ModelChoice model;
  std::string gguf;
};

void run_export(const ExportOptions& o, Console& io) {
  const ModelFiles files = resolve_chosen_model(o.model);
  check_output_file("--gguf", o.gguf, {files.config, files.weights, files.vocab, files.merges});
  io.err << files.source_note << "\n";
  const Gpt2Config config = read_gpt2_config(files.config);
  // llama.cpp's gpt2 graph has one GELU, the tanh form (gelu_new); an erf-GELU checkpoint still
  // loads, and its logits part from Hugging Face's by design.
  if (config.activation_function != "gelu_new")
    io.err << "export: warning: config.json's activation_function is " << config.activation_function
           << "; llama.cpp's gpt2 computes gelu_new (the tanh form)\n";
  const GgufExport e = export_gguf(files, o.gguf);
  io.out << "wrote " << e.path << " (GGUF float32, " << e.tensors << " tensors, " << e.bytes << " bytes)\n"
         << "sha256 " << e.sha256 << "\n";
  for (const auto& [name, sha] : e.sources) io.out << "  from " << name << " sha256 " << sha << "\n";
}

}  // namespace

void setup_export(CLI::App& app, VerbContext& ctx) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write the model genrepro would load as a file another engine loads: --gguf OUT is GGUF\n"
      "float32 with GPT-2's tokenizer, what llama.cpp runs (docs/engines.md). The same model always\n"
      "gives the same bytes; the sha256 of each source file is in the GGUF's metadata.");
  add_model_flags(*cmd, o->model);
  cmd->add_option("--gguf", o->gguf, "GGUF file to write (replaced atomically if it exists)")->required();
  on_verb(*cmd, ctx, [o, &ctx] {
    run_export(*o, ctx.io);
    ctx.exit_code = 0;
  });
}

}  // namespace genrepro::cli
