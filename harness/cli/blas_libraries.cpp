#include "cli/blas_libraries.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

namespace fs = std::filesystem;

// Debian's BLAS alternatives (update-alternatives --list libblas.so.3-x86_64-linux-gnu), each in a
// folder of its own. openblas-pthread is what Debian's libopenblas0 installs as the default, so it
// is the default value rather than an alternative of its own. Netlib's LAPACK is preferred with
// a BLAS that brings none: otherwise liblapack.so.3 would resolve to OpenBLAS's and map it too.
struct KnownBlas {
  const char* name;
  const char* folder;
  const char* lapack_folder;
  bool openblas;
};
constexpr KnownBlas kKnownBlas[] = {
    {"openblas-openmp", "openblas-openmp", "openblas-openmp", true},
    {"openblas-serial", "openblas-serial", "openblas-serial", true},
    {"blis-pthread", "blis-pthread", "lapack", false},
    {"blis-openmp", "blis-openmp", "lapack", false},
    {"blis-serial", "blis-serial", "lapack", false},
    {"atlas", "atlas", "atlas", false},
    {"reference", "blas", "lapack", false},
};

bool library_file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

}  // namespace

std::vector<BlasLibrary> installed_blas_libraries(const std::string& lib_dir) {
  std::vector<BlasLibrary> found = {{kDefaultBlas, "", "", true}};
  for (const KnownBlas& k : kKnownBlas) {
    const fs::path blas = fs::path(lib_dir) / k.folder / "libblas.so.3";
    if (!library_file_exists(blas)) continue;
    const fs::path lapack = fs::path(lib_dir) / k.lapack_folder / "liblapack.so.3";
    found.push_back({k.name, blas.string(), library_file_exists(lapack) ? lapack.string() : "", k.openblas});
  }
  return found;
}

PreferredBlasDir::PreferredBlasDir(const BlasLibrary& library) {
  if (library.blas.empty()) return;
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "genrepro-blas-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw Error("sensitivity: could not make a directory for blas=" + library.name + " in " + pattern + ": " + std::strerror(errno));
  dir_ = pattern;
  std::error_code ec;
  fs::create_symlink(library.blas, fs::path(dir_) / "libblas.so.3", ec);
  if (!ec && !library.lapack.empty()) fs::create_symlink(library.lapack, fs::path(dir_) / "liblapack.so.3", ec);
  if (ec) {
    fs::remove_all(dir_, ec);
    throw Error("sensitivity: could not link blas=" + library.name + " (" + library.blas + ") into " + pattern);
  }
}

PreferredBlasDir::~PreferredBlasDir() {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PreferredBlasDir::library_path(const std::string& inherited) const {
  if (dir_.empty()) return {};
  return inherited.empty() ? dir_ : dir_ + ":" + inherited;
}

}  // namespace genrepro::cli
