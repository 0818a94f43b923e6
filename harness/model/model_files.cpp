#include "model/model_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "util/errors.hpp"
#include "model/fixture_model.hpp"

namespace genrepro {

namespace fs = std::filesystem;

namespace {

// The Hugging Face cache keeps a repository `gpt2` under hub/models--gpt2/{refs,snapshots,blobs}.
constexpr const char* kHfRepoFolder = "models--gpt2";
constexpr const char* kFixtureSubdir = "fixtures";
constexpr const char* kDefaultFixtureName = "tiny";

const char* kMakeModelHint =
    "a model directory holds config.json, model.safetensors, vocab.json and merges.txt (Hugging Face "
    "layout); make a test model with `genrepro fixture --out DIR` or download gpt2 from Hugging Face";

std::string source_label(ModelSource s) {
  switch (s) {
    case ModelSource::flag: return "from --model";
    case ModelSource::env: return "from $GENREPRO_MODEL";
    case ModelSource::hf_cache: return "from the Hugging Face cache";
    case ModelSource::fixture: return "the tiny fixture";
  }
  return "?";
}

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows symlinks (the HF cache's snapshot -> blob links)
}

std::string getenv_str(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// A snapshot directory inside a models--gpt2 folder: the revision refs/main names, else the only
// one, else the most recently modified (ties broken by name, so the choice is deterministic).
std::optional<fs::path> pick_snapshot(const fs::path& repo_folder, std::string* why) {
  const fs::path snapshots = repo_folder / "snapshots";
  if (!is_dir(snapshots)) return std::nullopt;
  std::ifstream ref(repo_folder / "refs" / "main");
  std::string rev;
  if (ref && std::getline(ref, rev)) {
    rev.erase(std::remove_if(rev.begin(), rev.end(), [](unsigned char c) { return std::isspace(c); }), rev.end());
    if (!rev.empty() && rev.find('/') == std::string::npos && is_dir(snapshots / rev)) {
      *why = "revision " + rev + " from refs/main";
      return snapshots / rev;
    }
  }
  std::vector<fs::path> revs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(snapshots, ec))
    if (is_dir(e.path())) revs.push_back(e.path());
  if (revs.empty()) return std::nullopt;
  if (revs.size() == 1) {
    *why = "the only snapshot " + revs[0].filename().string();
    return revs[0];
  }
  auto mtime = [](const fs::path& p) {
    std::error_code e;
    return fs::last_write_time(p, e);
  };
  std::sort(revs.begin(), revs.end(), [&](const fs::path& a, const fs::path& b) {
    const auto ta = mtime(a), tb = mtime(b);
    return ta != tb ? ta > tb : a.filename() < b.filename();
  });
  *why = "the newest of " + std::to_string(revs.size()) + " snapshots, " + revs[0].filename().string();
  return revs[0];
}

// The directory that should hold the files: `dir` itself (HF layout), or a snapshot when `dir`
// is a models--gpt2 folder, a hub root holding one, or an HF_HOME holding hub/.
fs::path find_model_root(const fs::path& dir, std::string* why) {
  if (is_file(dir / "config.json") || is_file(dir / "model.safetensors")) return dir;
  for (const fs::path& repo : {dir, dir / kHfRepoFolder, dir / "hub" / kHfRepoFolder}) {
    if (auto snap = pick_snapshot(repo, why)) return *snap;
  }
  return dir;
}

// First of `names` present in `dir`, or empty. A dangling symlink (an HF blob that was deleted)
// or a directory in the file's place is reported as such, since "missing" would be confusing
// when `ls` shows the name.
std::string first_present(const fs::path& dir, std::initializer_list<const char*> names, std::string* broken) {
  for (const char* n : names) {
    if (is_file(dir / n)) return (dir / n).string();
    std::error_code ec;
    if (fs::is_symlink(dir / n, ec) && !fs::exists(dir / n, ec))
      *broken = std::string(n) + " is a broken symlink";
    else if (fs::exists(dir / n, ec))
      *broken = std::string(n) + (is_dir(dir / n) ? " is a directory" : " is not a regular file");
  }
  return {};
}

}  // namespace

const char* to_string(ModelSource s) {
  switch (s) {
    case ModelSource::flag: return "flag";
    case ModelSource::env: return "env";
    case ModelSource::hf_cache: return "hf_cache";
    case ModelSource::fixture: return "fixture";
  }
  return "?";
}

ModelFiles locate_model_dir(const std::string& dir_in, ModelSource source) {
  const std::string label = "model directory " + dir_in + " (" + source_label(source) + ")";
  if (dir_in.empty()) throw ModelFileError("model directory is an empty path; " + std::string(kMakeModelHint));
  std::error_code ec;
  fs::path dir = fs::absolute(dir_in, ec);
  if (ec) dir = dir_in;
  if (!fs::exists(dir, ec)) throw ModelFileError(label + ": does not exist; " + kMakeModelHint);
  if (!is_dir(dir)) throw ModelFileError(label + ": is not a directory; " + kMakeModelHint);

  std::string snapshot_why;
  const fs::path root = find_model_root(dir, &snapshot_why);

  ModelFiles m;
  m.dir = root.lexically_normal().string();
  m.source = source;
  struct Want {
    std::string* out;
    std::initializer_list<const char*> names;
    const char* shown;
  };
  const Want wants[] = {{&m.config, {"config.json"}, "config.json"},
                        {&m.weights, {"model.safetensors"}, "model.safetensors"},
                        {&m.vocab, {"vocab.json", "encoder.json"}, "vocab.json (or encoder.json)"},
                        {&m.merges, {"merges.txt", "vocab.bpe"}, "merges.txt (or vocab.bpe)"}};
  std::vector<std::string> missing;
  for (const Want& w : wants) {
    std::string broken;
    *w.out = first_present(root, w.names, &broken);
    if (w.out->empty()) missing.push_back(broken.empty() ? w.shown : std::string(w.shown) + " [" + broken + "]");
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
    const std::string where = root == dir ? label : label + " -> snapshot " + m.dir;
    // A common case: a checkpoint downloaded in PyTorch's pickle format only.
    const std::string pickle_note = m.weights.empty() && is_file(root / "pytorch_model.bin")
                                        ? " (pytorch_model.bin is not read: genrepro loads only safetensors)"
                                        : "";
    throw ModelFileError(where + ": missing " + list + pickle_note + "; " + kMakeModelHint);
  }
  m.source_note = "model: " + m.dir + " (" + source_label(source) +
                  (snapshot_why.empty() ? std::string() : ", " + snapshot_why) + ")";
  return m;
}

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

namespace {

// The Hugging Face hub caches to search, in the order huggingface_hub itself resolves them.
std::vector<std::pair<fs::path, std::string>> hf_hub_candidates() {
  std::vector<std::pair<fs::path, std::string>> out;
  if (auto d = getenv_str("HF_HUB_CACHE"); !d.empty()) out.push_back({d, "$HF_HUB_CACHE"});
  if (auto d = getenv_str("HF_HOME"); !d.empty()) out.push_back({fs::path(d) / "hub", "$HF_HOME/hub"});
  if (auto d = getenv_str("HOME"); !d.empty())
    out.push_back({fs::path(d) / ".cache" / "huggingface" / "hub", "~/.cache/huggingface/hub"});
  return out;
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

}  // namespace

ModelFiles resolve_model(const ModelResolveOptions& opts) {
  if (opts.flag) return locate_model_dir(*opts.flag, ModelSource::flag);
  if (auto env = getenv_str("GENREPRO_MODEL"); !env.empty()) return locate_model_dir(env, ModelSource::env);

  // An incomplete gpt2 snapshot (e.g. only pytorch_model.bin downloaded) is skipped, and the
  // note says so, rather than blocking the default path.
  std::string skipped;
  for (const auto& [hub, name] : hf_hub_candidates()) {
    if (!is_dir(hub / kHfRepoFolder / "snapshots")) continue;
    try {
      ModelFiles m = locate_model_dir((hub / kHfRepoFolder).string(), ModelSource::hf_cache);
      m.source_note += " [" + name + "]";
      return m;
    } catch (const ModelFileError& e) {
      skipped = std::string("; skipped the gpt2 snapshot in ") + name + ": " + e.what();
    }
  }

  const fs::path cache = opts.cache_dir.empty() ? default_cache_dir() : opts.cache_dir;
  const fs::path target = cache / kFixtureSubdir / kDefaultFixtureName;
  std::string made = "cached";
  if (!is_dir(target)) {
    make_fixture_atomically(target, opts.tokenizer_dir.empty() ? default_tokenizer_dir() : opts.tokenizer_dir);
    made = "made now";
  }
  ModelFiles m;
  try {
    m = locate_model_dir(target.string(), ModelSource::fixture);
  } catch (const ModelFileError& e) {
    throw ModelFileError(std::string(e.what()) + " [the cached fixture is damaged: remove " + target.string() +
                         " and it will be made again]");
  }
  m.source_note = "model: " + m.dir + " (the tiny fixture, " + made +
                  ": no --model, no $GENREPRO_MODEL, no complete gpt2 snapshot in the Hugging Face cache" +
                  skipped + ")";
  return m;
}

}  // namespace genrepro
