#include "cli/engine_loader.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

std::filesystem::path executable_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : self.parent_path();
}

// Beside the executable (the build tree), or in ../lib/genrepro (an installed layout).
std::filesystem::path find_engine_library() {
  const std::filesystem::path dir = executable_dir();
  for (const std::filesystem::path& candidate :
       {dir / kEngineLibraryName, dir / ".." / "lib" / "genrepro" / kEngineLibraryName}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return dir / kEngineLibraryName;
}

class LazyEngine final : public EngineVerbs {
 public:
  int generate(const GenerateRequest& r, Console& io) override { return engine().generate(r, io); }
  int run(const RunRequest& r, Console& io) override { return engine().run(r, io); }
  int replay(const ReplayRequest& r, Console& io) override { return engine().replay(r, io); }
  int env(Console& io) override { return engine().env(io); }

 private:
  EngineVerbs& engine() {
    if (loaded_ == nullptr) loaded_ = load();
    return *loaded_;
  }

  static EngineVerbs* load() {
    const std::filesystem::path path = find_engine_library();
    // RTLD_NOW: a missing libtorch symbol is reported here, as one line, not mid-run.
    // RTLD_GLOBAL: the process then resolves symbols as if the engine were linked in, so the
    // environment probe's dlsym(RTLD_DEFAULT, "sgemm_") finds the BLAS libtorch calls, and
    // set_blas_threads reaches it (evidence/environment.cpp).
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      // Not bad input: the installation is broken (exit 3 names what to rebuild).
      throw std::runtime_error("cannot load the engine library " + path.string() + ": " +
                               (why != nullptr ? why : "unknown error") + "; rebuild with scripts/build.sh");
    }
    using Entry = EngineVerbs& (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kEngineVerbsSymbol));
    if (entry == nullptr)
      throw std::runtime_error(path.string() + " does not export " + kEngineVerbsSymbol + "; rebuild with scripts/build.sh");
    // The handle stays open for the life of the process: libtorch does not support unloading.
    return &entry();
  }

  EngineVerbs* loaded_ = nullptr;
};

}  // namespace

std::unique_ptr<EngineVerbs> engine_loaded_on_first_use() { return std::make_unique<LazyEngine>(); }

}  // namespace genrepro::cli
