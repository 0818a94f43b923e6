#include "cli/model_choice.hpp"

namespace genrepro::cli {

void add_model_flags(CLI::App& cmd, ModelChoice& choice, const std::string& extra_help) {
  cmd.add_option("--model", choice.dir,
                 "Model directory (HF layout, or an HF cache), or gpt2 for the Hugging Face cache's GPT-2\n"
                 "[default: $GENREPRO_MODEL, the HF cache's gpt2, else the tiny random-weight fixture]" +
                     extra_help)
      ->type_name("DIR");
  cmd.add_flag("--require-real-model", choice.require_real,
               "Refuse the random-weight fixture: without --model, $GENREPRO_MODEL or a gpt2 in the\n"
               "Hugging Face cache, exit 2 instead (for CI jobs that mean to test real GPT-2)");
}

ModelFiles resolve_chosen_model(const ModelChoice& choice) {
  ModelResolveOptions where;
  where.flag = choice.dir;
  where.tokenizer_dir = default_tokenizer_dir();
  where.cache_dir = default_cache_dir();
  where.require_real_model = choice.require_real;
  return resolve_model(where);
}

}  // namespace genrepro::cli
