#include "cli/engine_loader.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "evidence/kernel_requirements.hpp"
#include "util/build_features.hpp"
#include "util/errors.hpp"
#include "util/text_excerpt.hpp"

namespace genrepro::cli {

namespace {

std::filesystem::path executable_dir() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : self.parent_path();
}

// Beside the executable (the build tree), or in ../lib/genrepro (an installed layout).
std::optional<std::filesystem::path> installed_library(const char* name) {
  const std::filesystem::path dir = executable_dir();
  for (const std::filesystem::path& candidate : {dir / name, dir / ".." / "lib" / "genrepro" / name}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  return std::nullopt;
}

std::filesystem::path find_engine_library() {
  return installed_library(kEngineLibraryName).value_or(executable_dir() / kEngineLibraryName);
}

// The CPU's answer, unless GENREPRO_TEST_HIDE_CPU_FEATURES hides the feature.
bool cpu_has(const CpuFlags& cpu, const std::string& feature) {
  if (const char* hidden = std::getenv("GENREPRO_TEST_HIDE_CPU_FEATURES")) {
    const std::string list = std::string(",") + hidden + ",";
    if (list.find("," + feature + ",") != std::string::npos) return false;
  }
  return cpu.has(feature);
}

// Sets `name` to `value`, returning the user's differing value (if any) that it replaced.
std::optional<std::pair<std::string, std::string>> pin(const char* name, const char* value) {
  std::optional<std::pair<std::string, std::string>> replaced;
  const char* before = std::getenv(name);
  if (before != nullptr && std::string(before) != value) replaced.emplace(name, before);
  ::setenv(name, value, 1);
  return replaced;
}

// OpenBLAS starts a thread per core as it loads, and they spin (sched_yield) until they time out:
// a fifth of a short run's CPU time, for threads no run uses (every run sets one BLAS thread
// before its first call: prepare_runtime_for_runs). Loaded with OPENBLAS_NUM_THREADS=1, it starts
// none. The user's value is back before anything reads the environment, so evidence records what
// the user set; it never decided a number, since each run's one thread is set explicitly.
void* dlopen_with_one_blas_thread(const std::filesystem::path& path) {
  const char* before = std::getenv("OPENBLAS_NUM_THREADS");
  const std::optional<std::string> users = before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (users) ::setenv("OPENBLAS_NUM_THREADS", users->c_str(), 1);
  else ::unsetenv("OPENBLAS_NUM_THREADS");
  return handle;
}

// A strict run needs neither libtorch nor a BLAS: the libtorch build ships a second engine library
// without them (CMakeLists.txt), and a strict `run` or `generate` opens that one. The libtorch-free
// build has only the one library, itself without libtorch.
bool strict_only(const NumericsRequest& numerics) { return numerics.mode == NumericsMode::strict; }

class LazyEngine final : public EngineVerbs {
 public:
  int generate(const GenerateRequest& r, Console& io) override {
    GenerateRequest local = r;
    if (strict_only(r.numerics) && open_strict_engine()) return loaded_->generate(local, io);
    local.numerics.overridden_env = before_load(r.numerics.cpu_kernels);
    return engine().generate(local, io);
  }
  int run(const RunRequest& r, Console& io) override {
    RunRequest local = r;
    if (strict_only(r.numerics) && open_strict_engine()) return loaded_->run(local, io);
    local.numerics.overridden_env = before_load(r.numerics.cpu_kernels);
    return engine().run(local, io);
  }
  int replay(const ReplayRequest& r, Console& io) override {
    ReplayRequest local = r;
    local.overridden_env = before_load(r.cpu_kernels);
    return engine().replay(local, io);
  }
  int env(const EnvRequest& r, Console& io) override {
    EnvRequest local = r;
    local.overridden_env = before_load(r.cpu_kernels);
    return engine().env(local, io);
  }

 private:
  // Only before the first load does the environment still decide the kernels; after it, the
  // engine's read-back is what tells whether the loaded ones are the ones asked for. An engine
  // without libtorch loads neither OpenMP nor a BLAS: nothing of theirs to check.
  std::vector<std::pair<std::string, std::string>> before_load(CpuKernels kernels) const {
    if (loaded_ != nullptr || !kBuiltWithLibtorch) return {};
    return prepare_cpu_kernels(kernels);
  }

  // Opens the strict-only engine unless an engine is open already (any engine runs strict
  // numerics, with the same bits). False when this installation has none.
  bool open_strict_engine() {
    if (loaded_ != nullptr) return true;
    const std::optional<std::filesystem::path> path = installed_library(kStrictEngineLibraryName);
    if (!path) return false;
    loaded_ = load(*path);
    strict_only_ = true;
    return true;
  }

  EngineVerbs& engine() {
    if (loaded_ == nullptr) loaded_ = load(find_engine_library());
    // Both libraries hold the same symbols: one process opens one of them. Each verb asks once.
    else if (strict_only_)
      throw std::runtime_error("this process opened the engine for strict numerics only; libtorch's numerics need a "
                               "process of their own");
    return *loaded_;
  }

  static EngineVerbs* load(const std::filesystem::path& path) {
    // RTLD_NOW: a missing libtorch symbol is reported here, as one line, not mid-run.
    // RTLD_GLOBAL: the process then resolves symbols as if the engine were linked in, so the
    // environment probe's dlsym(RTLD_DEFAULT, "sgemm_") finds the BLAS libtorch calls, and
    // set_blas_threads reaches it (evidence/environment.cpp).
    void* handle = dlopen_with_one_blas_thread(path);
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
  bool strict_only_ = false;
};

}  // namespace

void check_engine_environment(CpuKernels kernels) {
  if (const char* omp = std::getenv("OMP_NUM_THREADS")) {
    // libtorch reads it when it loads: 0, a negative or a non-number prints a backtrace per
    // process and is then ignored. OpenMP's nested form "4,2" is a list of whole numbers.
    const std::string value = omp;
    bool ok = true;
    for (std::size_t start = 0; ok && start <= value.size();) {
      const std::size_t end = std::min(value.find(',', start), value.size());
      const std::string part = value.substr(start, end - start);
      ok = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
           part.find_first_not_of('0') != std::string::npos;
      start = end + 1;
    }
    if (!ok)
      throw UsageError("OMP_NUM_THREADS=" + quoted_excerpt(value, 40) +
                       ": allowed: unset, or a whole number >= 1 (OpenMP's thread count; genrepro sets its own with "
                       "--threads); unset it (unset OMP_NUM_THREADS) or set it to 1");
  }
  if (kernels != CpuKernels::native) return;  // portable pins its own core, checked in prepare_cpu_kernels
  const char* core_name = std::getenv(kOpenblasCoretypeEnv);
  if (core_name == nullptr || *core_name == '\0') return;
  const KernelSet* core = find_openblas_core(core_name);
  if (core == nullptr) return;  // a name OpenBLAS does not know: it detects the CPU instead
  const CpuFlags cpu = this_cpu_flags();
  std::vector<std::string> missing;
  for (const char* f : core->flags)
    if (!cpu_has(cpu, f)) missing.push_back(f);
  if (missing.empty()) return;
  std::string lacks, runs;
  for (const std::string& f : missing) lacks += (lacks.empty() ? "" : ", ") + f;
  for (const std::string& c : executable_openblas_cores(cpu)) runs += (runs.empty() ? "" : ", ") + c;
  throw UsageError(std::string(kOpenblasCoretypeEnv) + "=" + quoted_excerpt(core_name, 40) + " with --cpu-kernels native: this CPU has no " +
                   lacks + ", which OpenBLAS's " + core->name +
                   " kernels use (they would end in an illegal instruction); allowed on this CPU: " + (runs.empty() ? "none" : runs) +
                   "; set one of them, unset " + kOpenblasCoretypeEnv + " (OpenBLAS then picks), or use --cpu-kernels portable");
}

std::vector<std::pair<std::string, std::string>> prepare_cpu_kernels(CpuKernels kernels) {
  check_engine_environment(kernels);
  if (kernels == CpuKernels::native) return {};
  const CpuFlags cpu = this_cpu_flags();
  for (const std::string& feature : portable_flags())
    if (!cpu_has(cpu, feature))
      throw UsageError("--cpu-kernels portable: this CPU has no " + feature +
                       " (portable needs AVX2 and FMA: Intel since Haswell, AMD since Zen); use --cpu-kernels native");
  std::vector<std::pair<std::string, std::string>> replaced;
  for (const auto& [name, value] : {std::pair{kOpenblasCoretypeEnv, kPortableBlasCoreEnv},
                                    std::pair{kAtenCpuCapabilityEnv, kPortableAtenEnv}})
    if (auto r = pin(name, value)) replaced.push_back(*r);
  return replaced;
}

std::unique_ptr<EngineVerbs> engine_loaded_on_first_use() { return std::make_unique<LazyEngine>(); }

}  // namespace genrepro::cli
