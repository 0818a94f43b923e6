#pragma once
// The BLAS libraries installed here that a child process's libtorch can be pointed at: the one
// the loader resolves by default, and Debian's other alternatives (docs/sensitivity.md, "Cells").
#include <string>
#include <vector>

namespace genrepro::cli {

inline constexpr const char* kDefaultBlas = "openblas";
inline constexpr const char* kDebianLibDir = "/usr/lib/x86_64-linux-gnu";

struct BlasLibrary {
  std::string name;    // the value of the sensitivity matrix's blas axis
  std::string blas;    // the libblas.so.3 the child prefers; empty: the loader's default
  std::string lapack;  // the liblapack.so.3 it prefers with it (so no other BLAS gets mapped); may be empty
  bool openblas = false;  // OpenBLAS: its core types (OPENBLAS_CORETYPE) and portable kernels apply
};

// The default first, then every alternative whose libblas.so.3 exists under `lib_dir`.
std::vector<BlasLibrary> installed_blas_libraries(const std::string& lib_dir = kDebianLibDir);

// A private directory holding libblas.so.3 (and liblapack.so.3) symlinks to `library`'s files,
// for the front of a child's LD_LIBRARY_PATH; removed with the object. Nothing for the default.
class PreferredBlasDir {
 public:
  explicit PreferredBlasDir(const BlasLibrary& library);
  ~PreferredBlasDir();
  PreferredBlasDir(const PreferredBlasDir&) = delete;
  PreferredBlasDir& operator=(const PreferredBlasDir&) = delete;
  // The child's LD_LIBRARY_PATH (this directory, then `inherited`); empty for the default library.
  std::string library_path(const std::string& inherited) const;

 private:
  std::string dir_;
};

}  // namespace genrepro::cli
