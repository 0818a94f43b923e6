#include "cli/llama_flags.hpp"

#include <cstdlib>

#include "util/errors.hpp"

namespace genrepro::cli {

void add_llama_flags(CLI::App& verb, LlamaFlags& flags) {
  verb.add_option("--llama-lib", flags.library,
                  "llama.cpp's libllama.so, or the directory holding it, for runs of the llama.cpp engine\n"
                  "[default: $GENREPRO_LLAMA_LIB]")
      ->type_name("PATH");
  verb.add_option("--llama-kv-type", flags.kv_type, "llama.cpp engine: the KV cache's type, f16 (llama.cpp's default) or f32")
      ->capture_default_str();
  verb.add_option("--llama-flash-attn", flags.flash_attn, "llama.cpp engine: flash attention, auto (llama.cpp's default), on or off")
      ->capture_default_str();
}

LlamaChoice llama_choice_from(const LlamaFlags& flags) {
  if (!llama::valid_kv_type(flags.kv_type))
    throw UsageError("--llama-kv-type " + flags.kv_type + ": allowed: " + llama::kKvTypeAllowed);
  if (!llama::valid_flash_attn(flags.flash_attn))
    throw UsageError("--llama-flash-attn " + flags.flash_attn + ": allowed: " + llama::kFlashAttnAllowed);
  LlamaChoice c;
  c.settings.kv_type = flags.kv_type;
  c.settings.flash_attn = flags.flash_attn;
  if (flags.library) {
    if (flags.library->empty()) throw UsageError("--llama-lib: empty; pass llama.cpp's libllama.so or its directory");
    c.library = *flags.library;
  } else if (const char* env = std::getenv("GENREPRO_LLAMA_LIB"); env != nullptr && *env != '\0') {
    c.library = env;
  }
  return c;
}

}  // namespace genrepro::cli
