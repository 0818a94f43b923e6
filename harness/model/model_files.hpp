#pragma once
// Where a model's files are. A model is a directory in Hugging Face layout (config.json,
// model.safetensors, vocab.json, merges.txt), or the HF cache layout
// (models--gpt2/snapshots/<revision>/, whose files are symlinks into blobs/), or a fixture made
// by `genrepro fixture`. Tokenizer files may also carry OpenAI's names (encoder.json, vocab.bpe).
#include <optional>
#include <string>

namespace genrepro {

enum class ModelSource { flag, env, hf_cache, fixture };
const char* to_string(ModelSource s);  // "flag", "env", "hf_cache", "fixture" (for evidence)

struct ModelFiles {
  std::string dir;          // absolute
  std::string config;       // config.json
  std::string weights;      // model.safetensors
  std::string vocab;        // vocab.json or encoder.json
  std::string merges;       // merges.txt or vocab.bpe
  ModelSource source = ModelSource::flag;
  std::string source_note;  // one line for stderr: "model: <dir> (from --model)" etc.
};

// Checks that `dir` holds a complete model (or is an HF cache root / models--gpt2 folder with a
// snapshot) and returns its files. Throws ModelFileError naming what is missing and the fix.
ModelFiles locate_model_dir(const std::string& dir, ModelSource source);

struct ModelResolveOptions {
  std::optional<std::string> flag;   // --model
  std::string tokenizer_dir;         // where the fixture's tokenizer files come from
  std::string cache_dir;             // where the default tiny fixture is made on first use
  bool require_real_model = false;   // --require-real-model: never fall back to the fixture
};

// --model DIR, else $GENREPRO_MODEL, else a gpt2 snapshot in the Hugging Face cache
// (the first set of $HF_HUB_CACHE, $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub,
// ~/.cache/huggingface/hub, as huggingface_hub resolves it), else the tiny random-weight fixture
// under cache_dir (made on first use). It never lies about which: a model that was asked for or
// found but is broken is a ModelFileError, never a fallback; `--model gpt2` means the Hugging Face
// cache's gpt2 and nothing else; require_real_model refuses the fixture. The caller prints
// source_note on stderr (model_resolution.cpp).
ModelFiles resolve_model(const ModelResolveOptions& opts);

// Default directories: $GENREPRO_TOKENIZER_DIR or the compiled-in path that scripts/setup.sh
// fills; $GENREPRO_CACHE_DIR or $XDG_CACHE_HOME/genrepro or ~/.cache/genrepro.
std::string default_tokenizer_dir();
std::string default_cache_dir();

}  // namespace genrepro
