#include "evidence/environment.hpp"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "evidence/kernel_requirements.hpp"

namespace genrepro {

namespace {

// Shared objects whose presence means a BLAS or LAPACK implementation is mapped.
constexpr std::string_view kBlasLikeNames[] = {"libblas", "libcblas", "libopenblas", "libmkl", "libblis",
                                               "liblapack", "libflexiblas", "libatlas", "libgoto"};

bool is_blas_like(const std::string& path) {
  const std::string base = std::filesystem::path(path).filename().string();
  return std::any_of(std::begin(kBlasLikeNames), std::end(kBlasLikeNames),
                     [&](std::string_view prefix) { return base.rfind(prefix, 0) == 0; });
}

std::string real_path(const std::string& path) {
  std::error_code ec;
  const auto p = std::filesystem::canonical(path, ec);
  return ec ? path : p.string();
}

std::vector<std::string> mapped_blas_objects() {
  std::set<std::string> found;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (!name.empty() && is_blas_like(name)) static_cast<std::set<std::string>*>(data)->insert(real_path(name));
        return 0;
      },
      &found);
  return {found.begin(), found.end()};
}

template <class Fn>
Fn lookup(const char* symbol) {
  return reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, symbol));
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

CpuInfo probe_cpu() {
  const CpuinfoFields proc = read_cpuinfo();
  CpuInfo cpu;
  cpu.model = proc.model;
  cpu.flags = proc.flags;
  cpu.logical_cores = proc.processors;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpu.usable_cores = CPU_COUNT(&set);
  return cpu;
}

std::string probe_os() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string v = line.substr(12);
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
      return v;
    }
  }
  return "unknown";
}

std::string probe_kernel() {
  struct utsname u {};
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

std::optional<FloatControl> probe_float_control() {
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFlushToZero = 1u << 15;
  constexpr unsigned kDenormalsAreZero = 1u << 6;
  constexpr unsigned kRoundingShift = 13;
  constexpr unsigned kRoundingMask = 3u;
  const unsigned csr = _mm_getcsr();
  FloatControl fc;
  fc.flush_to_zero = (csr & kFlushToZero) != 0;
  fc.denormals_are_zero = (csr & kDenormalsAreZero) != 0;
  static constexpr const char* kRounding[] = {"nearest", "down", "up", "toward_zero"};
  fc.rounding = kRounding[(csr >> kRoundingShift) & kRoundingMask];
  return fc;
#else
  return std::nullopt;
#endif
}

}  // namespace

const std::vector<std::string>& numerics_env_names() {
  // Thread counts change reduction order; core types and capabilities change which kernels run;
  // the loader variables change which libraries are mapped at all.
  static const std::vector<std::string> names = {
      "OMP_NUM_THREADS",      "OMP_DYNAMIC",          "OMP_PROC_BIND",      "OMP_PLACES",
      "MKL_NUM_THREADS",      "MKL_CBWR",             "MKL_ENABLE_INSTRUCTIONS", "MKL_DEBUG_CPU_TYPE",
      "OPENBLAS_NUM_THREADS", kOpenblasCoretypeEnv,   "OPENBLAS_L2_SIZE",   "OPENBLAS_DEFAULT_NUM_THREADS",
      "GOTO_NUM_THREADS",     "BLIS_NUM_THREADS",     kAtenCpuCapabilityEnv, "TORCH_NUM_THREADS",
      "GOMP_CPU_AFFINITY",    "KMP_AFFINITY",         "LD_PRELOAD",         "LD_LIBRARY_PATH"};
  return names;
}

namespace {

// The object that defines sgemm_ in the global lookup scope: the one libtorch's calls bind to.
std::optional<std::string> blas_object() {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info where{};
  if (sgemm == nullptr || dladdr(sgemm, &where) == 0 || where.dli_fname == nullptr) return std::nullopt;
  return std::string(where.dli_fname);
}

// Looks `symbol` up in `library` and the libraries it depends on (not in the whole process:
// another BLAS mapped for another reason must not be mistaken for the one in use).
class LibraryScope {
 public:
  explicit LibraryScope(const std::optional<std::string>& library)
      : handle_(library ? dlopen(library->c_str(), RTLD_LAZY | RTLD_NOLOAD) : nullptr) {}
  ~LibraryScope() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  LibraryScope(const LibraryScope&) = delete;
  LibraryScope& operator=(const LibraryScope&) = delete;
  template <class Fn>
  Fn find(const char* symbol) const {
    return handle_ == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(handle_, symbol));
  }

 private:
  void* handle_;
};

}  // namespace

BlasInfo probe_blas() {
  BlasInfo blas;
  blas.loaded = mapped_blas_objects();
  blas.library = blas_object();
  if (!blas.library) return blas;  // vendor "none": nothing defines sgemm_
  blas.resolved = real_path(*blas.library);
  const LibraryScope scope(blas.library);
  using TextFn = char* (*)();
  using ThreadsFn = int (*)();
  using MklVersionFn = void (*)(char*, int);
  if (auto config = scope.find<TextFn>("openblas_get_config")) {
    blas.vendor = "openblas";
    blas.config = config();
    if (auto core = scope.find<TextFn>("openblas_get_corename")) blas.core = core();
    if (auto threads = scope.find<ThreadsFn>("openblas_get_num_threads")) blas.threads = threads();
  } else if (auto mkl = scope.find<MklVersionFn>("mkl_get_version_string")) {
    constexpr int kMklVersionChars = 256;
    std::string text(kMklVersionChars, '\0');
    mkl(text.data(), kMklVersionChars);
    text.resize(std::min(text.find('\0'), text.size()));
    blas.vendor = "mkl";
    blas.config = trim(text);
    if (auto threads = scope.find<ThreadsFn>("mkl_get_max_threads")) blas.threads = threads();
  } else if (auto blis = scope.find<TextFn>("bli_info_get_version_str")) {
    blas.vendor = "blis";
    blas.config = blis();
  } else {
    // Netlib's reference BLAS has no query functions; Debian installs it under blas/.
    blas.vendor = blas.resolved->find("/blas/") != std::string::npos ? "reference" : "unknown";
  }
  return blas;
}

namespace {

// cpu.max of a cgroup directory: "max 100000" (no quota) or "<quota> <period>" in microseconds.
std::optional<int> cgroup_quota_cpus(const std::filesystem::path& dir) {
  std::ifstream in(dir / "cpu.max");
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  char* end = nullptr;
  const long long q = std::strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || q <= 0) return std::nullopt;
  return static_cast<int>(std::max<long long>(1, (q + period - 1) / period));
}

std::optional<int> cgroup_cpu_limit() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  std::optional<int> limit;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) != 0) continue;  // the cgroup v2 line
    std::filesystem::path dir = std::filesystem::path("/sys/fs/cgroup") / std::filesystem::path(line.substr(3)).relative_path();
    for (;;) {
      if (auto cpus = cgroup_quota_cpus(dir)) limit = std::min(limit.value_or(*cpus), *cpus);
      if (dir == "/sys/fs/cgroup" || !dir.has_parent_path() || dir.parent_path() == dir) break;
      dir = dir.parent_path();
    }
  }
  return limit;
}

}  // namespace

int usable_cpus() {
  int cpus = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus < 1) cpus = 1;
  if (auto quota = cgroup_cpu_limit()) cpus = std::min(cpus, *quota);
  return std::max(cpus, 1);
}

int default_threads() { return std::min(usable_cpus(), kMaxDefaultThreads); }

bool set_blas_threads(int threads) {
  using SetThreadsFn = void (*)(int);
  const LibraryScope scope(blas_object());
  if (auto set = scope.find<SetThreadsFn>("openblas_set_num_threads")) {
    set(threads);
    return true;
  }
  return false;
}

Environment probe_process_environment() {
  Environment env;
  env.blas = probe_blas();
  using OmpMaxFn = int (*)();
  if (auto omp_max = lookup<OmpMaxFn>("omp_get_max_threads")) env.threads.omp_max = omp_max();
  env.cpu = probe_cpu();
#ifdef GENREPRO_COMPILER
  env.compiler = GENREPRO_COMPILER;
#else
  env.compiler = "unknown";
#endif
  env.os = probe_os();
  env.kernel = probe_kernel();
  env.float_control = probe_float_control();
  for (const auto& name : numerics_env_names()) {
    const char* value = std::getenv(name.c_str());
    env.numerics_env.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
  }
  return env;
}

}  // namespace genrepro
