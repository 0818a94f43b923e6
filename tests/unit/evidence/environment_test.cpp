// The environment block is read from the process: the BLAS it reports must be the one really
// mapped (checked against /proc/self/maps, an independent view of the address space), the
// variables it records must be the ones set, and the CPU facts must match the kernel's.
#include "evidence/environment.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

std::set<std::string> mapped_files() {
  std::set<std::string> files;
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    const auto slash = line.find('/');
    if (slash != std::string::npos) files.insert(line.substr(slash));
  }
  return files;
}

TEST(Environment, BlasReportedIsTheOneMapped) {
  // The core tests do not link a BLAS; load the system's the way libtorch's dependency would.
  void* handle = dlopen("libblas.so.3", RTLD_NOW | RTLD_GLOBAL);
  ASSERT_NE(handle, nullptr) << "libblas.so.3 not installed: " << dlerror();
  const BlasInfo blas = probe_blas();
  ASSERT_TRUE(blas.library.has_value());
  ASSERT_TRUE(blas.resolved.has_value());
  const auto maps = mapped_files();
  EXPECT_TRUE(maps.count(*blas.resolved)) << *blas.resolved << " is not in /proc/self/maps";
  EXPECT_EQ(*blas.resolved, std::filesystem::canonical(*blas.library).string());
  for (const auto& lib : blas.loaded) EXPECT_TRUE(maps.count(lib)) << lib << " reported but not mapped";
  // And the other way round: every BLAS/LAPACK-like object in the maps is reported.
  for (const auto& file : maps) {
    const std::string base = std::filesystem::path(file).filename().string();
    if (base.rfind("libblas", 0) == 0 || base.rfind("libopenblas", 0) == 0 || base.rfind("liblapack", 0) == 0) {
      EXPECT_NE(std::find(blas.loaded.begin(), blas.loaded.end(), file), blas.loaded.end()) << file << " mapped but not reported";
    }
  }
  if (blas.vendor == "openblas") {
    EXPECT_TRUE(blas.config.has_value());
    EXPECT_NE(blas.config->find("OpenBLAS"), std::string::npos) << *blas.config;
    ASSERT_TRUE(blas.threads.has_value());
    ASSERT_TRUE(set_blas_threads(1));
    EXPECT_EQ(probe_blas().threads, 1);
  }
}

TEST(Environment, RecordsNumericsVariablesAsSet) {
  ::setenv("OPENBLAS_CORETYPE", "Haswell", 1);
  ::unsetenv("MKL_CBWR");
  const Environment env = probe_process_environment();
  ::unsetenv("OPENBLAS_CORETYPE");
  bool saw_coretype = false, saw_cbwr = false;
  for (const auto& [name, value] : env.numerics_env) {
    if (name == "OPENBLAS_CORETYPE") {
      saw_coretype = true;
      EXPECT_EQ(value, std::optional<std::string>("Haswell"));
    }
    if (name == "MKL_CBWR") {
      saw_cbwr = true;
      EXPECT_FALSE(value.has_value());
    }
  }
  EXPECT_TRUE(saw_coretype);
  EXPECT_TRUE(saw_cbwr);
}

TEST(Environment, CpuAndSystemFacts) {
  const Environment env = probe_process_environment();
  EXPECT_EQ(env.cpu.logical_cores, sysconf(_SC_NPROCESSORS_CONF));
  EXPECT_GE(env.cpu.usable_cores, 1);
  EXPECT_LE(env.cpu.usable_cores, env.cpu.logical_cores);
  EXPECT_FALSE(env.cpu.model.empty());
  EXPECT_NE(env.cpu.flags.find("sse2"), std::string::npos);
  EXPECT_EQ(env.kernel.rfind("Linux ", 0), 0u) << env.kernel;
  EXPECT_NE(env.os, "unknown");
  EXPECT_NE(env.compiler, "unknown");
  ASSERT_TRUE(env.float_control.has_value());
  EXPECT_EQ(env.float_control->rounding, "nearest");
  EXPECT_FALSE(env.float_control->flush_to_zero);
}

}  // namespace
}  // namespace genrepro
