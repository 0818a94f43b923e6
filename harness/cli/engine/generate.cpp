// genrepro generate, the part that runs the model (the flags are checked in cli/generate.cpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/engine/engine_verbs.hpp"
#include "engine/generation_loop.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "engine/torch_runtime.hpp"
#include "model/model_files.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {

int generate_text(const GenerateRequest& o, Console& io) {
  const RunParams& params = o.params;
  set_torch_threads(o.threads);

  const ModelFiles files = resolve_chosen_model(o.model);

  const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(files.vocab, files.merges);
  const std::vector<int64_t> prompt_ids = tokenizer.encode(o.prompt);
  if (prompt_ids.empty())
    throw UsageError("--prompt is empty; allowed: text that encodes to at least 1 token");

  const Gpt2Model model = Gpt2Model::load(files);
  // Said once the files have loaded: a broken model's error (which names the file) stays the
  // only line on stderr.
  io.err << files.source_note << "\n";
  const auto source = params.use_cache ? make_cached_source(model) : make_recompute_source(model);
  const auto token_text = [&tokenizer](int64_t id) { return tokenizer.token_text(id); };
  const GenerationResult result =
      run_generation(*source, prompt_ids, params, model.config().eos_token_id, token_text);

  if (o.ids) {
    io.out << nlohmann::json(result.output_ids).dump() << "\n";
  } else {
    std::vector<int64_t> all = result.prompt_ids;
    all.insert(all.end(), result.output_ids.begin(), result.output_ids.end());
    io.out << tokenizer.decode_for_display(all) << "\n";
  }
  io.err << "stop: " << to_string(result.stop_reason) << " after " << result.stop_step << " new tokens ("
            << to_string(params.sampling.mode) << ", " << (params.use_cache ? "kv cache" : "recompute") << ")\n";
  return kExitOk;
}

}  // namespace genrepro::cli
