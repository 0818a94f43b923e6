#pragma once
// The cache axis of genrepro sensitivity (docs/sensitivity.md, "The cache axis"): a cell that runs
// every run through one logits path gets copies of the experiment files with use_cache forced.
// No libtorch.
#include <string>
#include <vector>

#include "params/experiment_file.hpp"

namespace genrepro::cli {

// The cache axis' value for each run's own use_cache: the reference's.
inline const std::string kCacheAsWritten = "as-written";

// The experiment file `spec` was read from (spec.spec, as written) with use_cache set for every
// run: the top-level default forced, every run entry's own removed. Throws UsageError naming the
// file and key when it lists use_cache values, or when forcing makes two of its runs one.
std::string with_use_cache(const ExperimentSpec& spec, bool use_cache);

// The experiment files a cell's child runs: the user's own, or copies with use_cache forced,
// made (and refused) before anything is written, then written next to the cell's evidence so the
// evidence's experiments[].path names what ran.
class CellExperiments {
 public:
  // `cache` is the cell's cache axis value; copies go to CELL_DIR/NAME.experiments/.
  CellExperiments(const std::vector<ExperimentSpec>& experiments, const std::string& cache, const std::string& cell_dir,
                  const std::string& name);

  bool forced() const { return !texts_.empty(); }
  // The files the child is given.
  const std::vector<std::string>& paths() const { return paths_; }
  // Writes the copies (nothing for the user's own files).
  void write() const;

 private:
  std::vector<std::string> paths_;
  std::vector<std::string> texts_;  // empty: the user's files, as written
};

}  // namespace genrepro::cli
