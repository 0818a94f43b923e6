// --cpu-kernels before the engine loads (harness/cli/engine_loader.hpp): portable pins OpenBLAS's
// and ATen's kernel variables whatever the user set, and says what it replaced; a CPU without
// AVX2 or FMA is refused; native leaves the environment alone. The read-back after loading is
// the engine's (tests/cli/portable_kernels.py runs it in child processes).
#include "cli/engine_loader.hpp"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "cli/numerics_flags.hpp"
#include "support/env_guard.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

using test::EnvGuard;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "(unset)";
}

bool cpu_has_avx2_and_fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

TEST(CpuKernels, PortableOverridesTheUsersVariablesAndSaysSo) {
  if (!cpu_has_avx2_and_fma()) GTEST_SKIP() << "this CPU has no AVX2/FMA: portable is refused here";
  EnvGuard hide("GENREPRO_TEST_HIDE_CPU_FEATURES", std::nullopt);
  EnvGuard core("OPENBLAS_CORETYPE", "SkylakeX");
  EnvGuard aten("ATEN_CPU_CAPABILITY", std::nullopt);
  const auto replaced = prepare_cpu_kernels(CpuKernels::portable);
  EXPECT_EQ(env("OPENBLAS_CORETYPE"), "Haswell");
  EXPECT_EQ(env("ATEN_CPU_CAPABILITY"), "avx2");
  ASSERT_EQ(replaced.size(), 1u);  // an unset variable replaces nothing
  EXPECT_EQ(replaced[0].first, "OPENBLAS_CORETYPE");
  EXPECT_EQ(replaced[0].second, "SkylakeX");
}

TEST(CpuKernels, NativeLeavesTheEnvironmentAlone) {
  // Prescott: a core every x86-64 CPU runs (native refuses a core the CPU cannot run, such as
  // SkylakeX without AVX-512).
  EnvGuard core("OPENBLAS_CORETYPE", "Prescott");
  EnvGuard aten("ATEN_CPU_CAPABILITY", std::nullopt);
  EXPECT_TRUE(prepare_cpu_kernels(CpuKernels::native).empty());
  EXPECT_EQ(env("OPENBLAS_CORETYPE"), "Prescott");
  EXPECT_EQ(env("ATEN_CPU_CAPABILITY"), "(unset)");
}

TEST(CpuKernels, PortableIsRefusedWithoutAvx2OrFma) {
  EnvGuard core("OPENBLAS_CORETYPE", std::nullopt);
  for (const char* missing : {"avx2", "fma"}) {
    EnvGuard hide("GENREPRO_TEST_HIDE_CPU_FEATURES", std::string("sse4_2,") + missing);
    try {
      prepare_cpu_kernels(CpuKernels::portable);
      ADD_FAILURE() << "portable accepted without " << missing;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--cpu-kernels portable: this CPU has no ") + missing +
                                           " (portable needs AVX2 and FMA: Intel since Haswell, AMD since Zen); use "
                                           "--cpu-kernels native");
    }
    EXPECT_EQ(env("OPENBLAS_CORETYPE"), "(unset)");  // nothing set before the refusal
  }
}

TEST(CpuKernels, FlagValues) {
  EXPECT_EQ(cpu_kernels_from("portable"), CpuKernels::portable);
  EXPECT_EQ(cpu_kernels_from("native"), CpuKernels::native);
  try {
    cpu_kernels_from("haswell");
    ADD_FAILURE() << "accepted --cpu-kernels haswell";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--cpu-kernels haswell: allowed: portable, native");
  }
}

}  // namespace
}  // namespace genrepro::cli
