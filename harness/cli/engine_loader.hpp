#pragma once
// The engine verbs, loaded on first use: libgenrepro_engine_verbs.so (libtorch and ~290 shared
// libraries with it) is opened only when a verb that runs the model is called, so diff, bless,
// report, merge, check-article, tokenize, fixture, env --no-engine and --help start in
// milliseconds. The library is looked up next to the running executable.
#include <memory>

#include "cli/verbs.hpp"

namespace genrepro::cli {

// The name of the symbol the engine library exports: `EngineVerbs& genrepro_engine_verbs()`.
inline constexpr const char* kEngineVerbsSymbol = "genrepro_engine_verbs";
inline constexpr const char* kEngineLibraryName = "libgenrepro_engine_verbs.so";

// An EngineVerbs whose every call first loads the engine library (once), then forwards.
std::unique_ptr<EngineVerbs> engine_loaded_on_first_use();

}  // namespace genrepro::cli
