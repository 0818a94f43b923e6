// The blas axis of genrepro sensitivity (docs/sensitivity.md, "Cells"): which libraries are offered
// (found on disk as Debian installs them, checked here on a planted directory), the private
// directory a child's loader is pointed at, and --cells refusals, in-process before any child runs.
#include "cli/blas_libraries.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "unit/cli/no_engine.hpp"
#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "ELF";
}

std::vector<std::string> names(const std::vector<BlasLibrary>& libs) {
  std::vector<std::string> n;
  for (const BlasLibrary& b : libs) n.push_back(b.name);
  return n;
}

TEST(SensitivityBlas, OffersTheDefaultThenEachAlternativeWhoseLibraryExists) {
  test::ScratchDir lib("blas-libdir");
  EXPECT_EQ(names(installed_blas_libraries(lib.path().string())), std::vector<std::string>{"openblas"});
  touch(fs::path(lib.path()) / "blas/libblas.so.3");
  touch(fs::path(lib.path()) / "blis-openmp/libblas.so.3");
  touch(fs::path(lib.path()) / "openblas-openmp/liblapack.so.3");  // LAPACK alone offers nothing
  const std::vector<BlasLibrary> found = installed_blas_libraries(lib.path().string());
  ASSERT_EQ(names(found), (std::vector<std::string>{"openblas", "blis-openmp", "reference"}));
  EXPECT_TRUE(found[0].openblas);
  EXPECT_TRUE(found[0].blas.empty());
  EXPECT_FALSE(found[2].openblas);
  EXPECT_EQ(found[2].blas, (fs::path(lib.path()) / "blas/libblas.so.3").string());
  EXPECT_EQ(found[2].lapack, "");  // no Netlib LAPACK planted: none preferred
  touch(fs::path(lib.path()) / "lapack/liblapack.so.3");
  EXPECT_EQ(installed_blas_libraries(lib.path().string())[2].lapack, (fs::path(lib.path()) / "lapack/liblapack.so.3").string());
  EXPECT_EQ(installed_blas_libraries(lib.path().string())[1].lapack, (fs::path(lib.path()) / "lapack/liblapack.so.3").string());
}

TEST(SensitivityBlas, APreferredDirectoryHoldsTheSymlinksAndIsRemovedAfterwards) {
  test::ScratchDir lib("blas-libdir");
  touch(fs::path(lib.path()) / "blas/libblas.so.3");
  touch(fs::path(lib.path()) / "lapack/liblapack.so.3");
  const BlasLibrary reference = installed_blas_libraries(lib.path().string()).back();
  std::string dir;
  {
    const PreferredBlasDir preferred(reference);
    const std::string path = preferred.library_path("/opt/x:/opt/y");
    dir = path.substr(0, path.find(':'));
    EXPECT_EQ(path, dir + ":/opt/x:/opt/y");
    EXPECT_EQ(fs::read_symlink(fs::path(dir) / "libblas.so.3"), reference.blas);
    EXPECT_EQ(fs::read_symlink(fs::path(dir) / "liblapack.so.3"), reference.lapack);
    EXPECT_EQ(preferred.library_path(""), dir);
  }
  EXPECT_FALSE(fs::exists(dir));
  const PreferredBlasDir none(installed_blas_libraries(lib.path().string()).front());
  EXPECT_EQ(none.library_path("/opt/x"), "");  // the default: the child's LD_LIBRARY_PATH is left alone
}

using test_support::VerbResult;

VerbResult sensitivity(const std::string& out, const std::string& cells) {
  return test_support::run_without_engine({"sensitivity", "x.json", "--out", out, "--cells", cells});
}

bool one_line(const std::string& s) { return !s.empty() && s.find('\n') == s.size() - 1; }

TEST(SensitivityBlas, ALibraryNotInstalledIsExitTwoNamingTheOffered) {
  test::ScratchDir scratch("sens-blas");
  const std::string out = (scratch.path() / "m").string();
  const VerbResult r = sensitivity(out, "blas=openblas,mkl;threads=1");
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  std::string allowed;
  for (const BlasLibrary& b : installed_blas_libraries()) allowed += (allowed.empty() ? "" : ", ") + b.name;
  EXPECT_NE(r.err.find("--cells blas=mkl: not offered on this machine; allowed: " + allowed + "\n"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));  // refused before anything was made
}

TEST(SensitivityBlas, AnOpenBlasCoreWithAnotherBlasIsRefused) {
  const std::vector<BlasLibrary> libs = installed_blas_libraries();
  const auto other = std::find_if(libs.begin(), libs.end(), [](const BlasLibrary& b) { return !b.openblas; });
  if (other == libs.end()) GTEST_SKIP() << "no BLAS other than OpenBLAS installed";
  test::ScratchDir scratch("sens-blas");
  const VerbResult r = sensitivity((scratch.path() / "m").string(), "kernels=native:Prescott;blas=" + other->name);
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find("blas=" + other->name + " and kernels=native:Prescott: OpenBLAS core types apply to OpenBLAS only"),
            std::string::npos) << r.err;
}

}  // namespace
}  // namespace genrepro::cli
