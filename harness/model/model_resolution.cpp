// Which model a command uses when none, one or several are on offer (model_files.hpp's
// resolve_model). Kept apart from locating a directory's files (model_files.cpp) because only this
// step may make a fixture.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "model/fixture_model.hpp"
#include "model/model_files.hpp"
#include "model/hf_cache_layout.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFixtureSubdir = "fixtures";
constexpr const char* kDefaultFixtureName = "tiny";
// What --model names to mean "GPT-2 from the Hugging Face cache", as from_pretrained("gpt2") does.
constexpr const char* kHfModelName = "gpt2";
constexpr const char* kGetWeightsHint = "README.md, 'The model', says how to download GPT-2";

std::string getenv_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The one Hugging Face hub cache, as huggingface_hub resolves it: $HF_HUB_CACHE, else
// $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub. Only the first
// that is set counts: huggingface_hub never falls through to the next, so neither does genrepro
// (a job that set HF_HUB_CACHE to an empty cache must not pick up ~/.cache's weights).
std::vector<std::pair<fs::path, std::string>> hf_hub_candidates() {
  if (auto d = getenv_str("HF_HUB_CACHE"); !d.empty()) return {{d, "$HF_HUB_CACHE"}};
  if (auto d = getenv_str("HF_HOME"); !d.empty()) return {{fs::path(d) / "hub", "$HF_HOME/hub"}};
  if (auto d = getenv_str("XDG_CACHE_HOME"); !d.empty())
    return {{fs::path(d) / "huggingface" / "hub", "$XDG_CACHE_HOME/huggingface/hub"}};
  if (auto d = getenv_str("HOME"); !d.empty()) return {{fs::path(d) / ".cache" / "huggingface" / "hub", "~/.cache/huggingface/hub"}};
  return {};
}

std::string searched_caches() {
  std::string names;
  for (const auto& [hub, name] : hf_hub_candidates()) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? "no Hugging Face cache is set ($HF_HUB_CACHE, $HF_HOME, $XDG_CACHE_HOME, $HOME)" : names;
}

// The gpt2 snapshot of the first Hugging Face cache that holds a models--gpt2 folder. A folder that
// is there but incomplete or damaged is an error, never skipped: a job that meant to test GPT-2
// must not go on with something else.
std::optional<ModelFiles> gpt2_from_hf_cache() {
  for (const auto& [hub, name] : hf_hub_candidates()) {
    if (!is_dir(hub / kHfRepoFolder)) continue;
    try {
      ModelFiles m = locate_model_dir((hub / kHfRepoFolder).string(), ModelSource::hf_cache);
      m.source_note += " [" + name + "]";
      return m;
    } catch (const ModelFileError& e) {
      throw ModelFileError(std::string(e.what()) + " [the gpt2 snapshot found in " + name +
                           " is incomplete or damaged: complete the download, remove it, or pass --model DIR]");
    }
  }
  return std::nullopt;
}

// Makes the tiny fixture at `target` so that no process ever sees half a model: everything is
// written into a fresh sibling directory that is renamed into place in one step. When another
// process wins the race, its (complete) directory is kept and ours is removed.
void make_fixture_atomically(const fs::path& target, const std::string& tokenizer_dir) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec)
    throw ModelFileError(target.parent_path().string() + ": cannot create the fixture cache directory (" +
                         ec.message() + "); set GENREPRO_CACHE_DIR or pass --model DIR");
  std::random_device rd;  // only names the temporary directory; never touches model bytes
  const fs::path tmp = target.parent_path() / ("." + target.filename().string() + ".tmp." +
                                               std::to_string(::getpid()) + "." + std::to_string(rd()));
  try {
    fs::create_directory(tmp);
    write_fixture_model(tmp.string(), FixturePreset::tiny, tokenizer_dir);
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove_all(tmp, ec);  // another process made it first (ENOTEMPTY/EEXIST): use theirs
    if (!is_dir(target))
      throw ModelFileError(target.string() + ": cannot move the new fixture into place; set GENREPRO_CACHE_DIR "
                           "or pass --model DIR");
  }
}

ModelFiles tiny_fixture(const ModelResolveOptions& opts) {
  const fs::path cache = opts.cache_dir.empty() ? default_cache_dir() : opts.cache_dir;
  const fs::path target = cache / kFixtureSubdir / kDefaultFixtureName;
  if (!is_dir(target))
    make_fixture_atomically(target, opts.tokenizer_dir.empty() ? default_tokenizer_dir() : opts.tokenizer_dir);
  ModelFiles m;
  try {
    m = locate_model_dir(target.string(), ModelSource::fixture);
  } catch (const ModelFileError& e) {
    throw ModelFileError(std::string(e.what()) + " [the cached fixture is damaged: remove " + target.string() +
                         " and it will be made again]");
  }
  m.source_note = "model: the tiny random-weight fixture (" + m.dir +
                  "): no model given or found, so outputs are noise by design; pass --model DIR for real weights";
  return m;
}

}  // namespace

std::string default_tokenizer_dir() {
  const std::string env = getenv_str("GENREPRO_TOKENIZER_DIR");
  return env.empty() ? std::string(GENREPRO_DEFAULT_TOKENIZER_DIR) : env;
}

std::string default_cache_dir() {
  if (auto d = getenv_str("GENREPRO_CACHE_DIR"); !d.empty()) return d;
  if (auto d = getenv_str("XDG_CACHE_HOME"); !d.empty()) return (fs::path(d) / "genrepro").string();
  if (auto d = getenv_str("HOME"); !d.empty()) return (fs::path(d) / ".cache" / "genrepro").string();
  throw UsageError("no cache directory: none of $GENREPRO_CACHE_DIR, $XDG_CACHE_HOME, $HOME is set; "
                   "set GENREPRO_CACHE_DIR or pass --model DIR");
}

ModelFiles resolve_model(const ModelResolveOptions& opts) {
  if (opts.flag && *opts.flag == kHfModelName) {
    if (auto m = gpt2_from_hf_cache()) return *m;
    throw ModelFileError(std::string("--model ") + kHfModelName + ": no gpt2 snapshot in the Hugging Face cache (" +
                         searched_caches() + "); " + kGetWeightsHint + ", or pass --model DIR");
  }
  if (opts.flag) return locate_model_dir(*opts.flag, ModelSource::flag);
  if (auto env = getenv_str("GENREPRO_MODEL"); !env.empty()) return locate_model_dir(env, ModelSource::env);
  if (auto m = gpt2_from_hf_cache()) return *m;
  if (opts.require_real_model)
    throw ModelFileError("--require-real-model: no model given or found (no --model, no $GENREPRO_MODEL, no gpt2 in " +
                         searched_caches() + "), and the random-weight fixture is not allowed; " + kGetWeightsHint);
  return tiny_fixture(opts);
}

}  // namespace genrepro
