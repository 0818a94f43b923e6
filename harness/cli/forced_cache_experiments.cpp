#include "cli/forced_cache_experiments.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "params/experiment_file.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro::cli {

namespace fs = std::filesystem;

std::string with_use_cache(const ExperimentSpec& experiment, bool use_cache) {
  const std::string& path = experiment.path;
  nlohmann::json spec = experiment.spec;
  const std::string axis = std::string("cache=") + (use_cache ? "cached" : "recompute");
  const auto refuse_list = [&](const nlohmann::json& v, const std::string& where) {
    if (v.is_array())
      throw UsageError("sensitivity: " + axis + ": " + path + ": " + where +
                       " is a list; the cache axis sets use_cache for every run, which would make its runs one; allowed: "
                       "--cells cache=as-written for this experiment, or one use_cache value");
  };
  if (spec.contains("use_cache")) refuse_list(spec["use_cache"], "use_cache");
  for (std::size_t i = 0; i < spec["runs"].size(); ++i) {
    nlohmann::json& entry = spec["runs"][i];
    if (!entry.is_object() || !entry.contains("use_cache")) continue;
    refuse_list(entry["use_cache"], "runs[" + std::to_string(i) + "].use_cache");
    entry.erase("use_cache");
  }
  spec["use_cache"] = use_cache;
  const std::string text = json_document_text(spec) + "\n";
  try {
    parse_experiment(text, path);
  } catch (const SpecError& e) {
    // The user's file was valid: only forcing use_cache can have made its runs coincide.
    throw UsageError("sensitivity: " + axis + ": " + path + ": with use_cache forced its runs are not distinct (" + e.what() +
                     "); allowed: --cells cache=as-written for this experiment");
  }
  return text;
}

CellExperiments::CellExperiments(const std::vector<ExperimentSpec>& experiments, const std::string& cache,
                                 const std::string& cell_dir, const std::string& name) {
  for (const ExperimentSpec& e : experiments) paths_.push_back(e.path);
  if (cache == kCacheAsWritten) return;
  const fs::path dir = fs::path(cell_dir) / (name + ".experiments");
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    texts_.push_back(with_use_cache(experiments[i], cache == "cached"));
    paths_[i] = (dir / (std::to_string(i) + "-" + fs::path(paths_[i]).filename().string())).string();
  }
}

void CellExperiments::write() const {
  for (std::size_t i = 0; i < texts_.size(); ++i) {
    fs::create_directories(fs::path(paths_[i]).parent_path());
    write_file_atomically(paths_[i], texts_[i]);
  }
}

}  // namespace genrepro::cli
