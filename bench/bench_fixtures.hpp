#pragma once
// The fixture models the benchmarks run on, made on first use under the system temp dir and
// reused afterwards (shared by every *_bench.cpp that needs a model).
#include <filesystem>
#include <string>

#include "model/fixture_model.hpp"

namespace genrepro::bench {

inline std::string fixture_dir(FixturePreset preset) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("genrepro-bench-" + std::string(to_string(preset)));
  if (!fs::exists(dir / "model.safetensors") || !fs::exists(dir / "config.json"))
    write_fixture_model(dir.string(), preset, GENREPRO_BENCH_TOKENIZER_DIR);
  return dir.string();
}

}  // namespace genrepro::bench
