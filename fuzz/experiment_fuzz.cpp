// Experiment-file validation on arbitrary text: an expanded, checked spec, or a SpecError.
#include <cstdint>
#include <string>

#include "params/experiment_file.hpp"
#include "params/sampling_params.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const genrepro::ExperimentSpec spec = genrepro::parse_experiment(text, "fuzz.json");
    for (const genrepro::ExpandedRun& run : spec.runs)
      if (!genrepro::check_run_params(run.params).empty()) __builtin_trap();  // expanded runs are valid
  } catch (const genrepro::Error&) {
  }
  return 0;
}
