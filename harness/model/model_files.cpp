#include "model/model_files.hpp"
#include "model/hf_cache_layout.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "util/errors.hpp"

namespace genrepro {

namespace fs = std::filesystem;

namespace {

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

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);  // follows symlinks (the HF cache's snapshot -> blob links)
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

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

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

}  // namespace genrepro
