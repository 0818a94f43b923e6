// What the engine verbs check of the process environment before libtorch and OpenBLAS load:
// OMP_NUM_THREADS (libtorch prints a backtrace for 0 and goes on) and, with --cpu-kernels native,
// an OPENBLAS_CORETYPE whose instructions this CPU lacks (OpenBLAS would run them: SIGILL).
// Error lines: one line, however many lines or bytes a value quoted in them had.
#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "cli/engine_loader.hpp"
#include "evidence/kernel_requirements.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

// Sets (or unsets) one variable for a test's scope and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string refusal(CpuKernels kernels) {
  try {
    check_engine_environment(kernels);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(EngineEnvironment, OmpNumThreadsMustBeAWholeNumberOfAtLeastOne) {
  const ScopedEnv core(kOpenblasCoretypeEnv, nullptr);
  for (const char* bad : {"0", "-1", "abc", "", "1.5", "4,", "0,2", " 2"}) {
    const ScopedEnv omp("OMP_NUM_THREADS", bad);
    const std::string why = refusal(CpuKernels::portable);
    EXPECT_EQ(why.rfind("OMP_NUM_THREADS=", 0), 0u) << bad << ": " << why;
    EXPECT_NE(why.find("allowed: unset, or a whole number >= 1"), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  for (const char* good : {"1", "8", "4,2", "016"}) {
    const ScopedEnv omp("OMP_NUM_THREADS", good);
    EXPECT_EQ(refusal(CpuKernels::portable), "(accepted)") << good;
  }
  const ScopedEnv omp("OMP_NUM_THREADS", "0");
  EXPECT_THROW(prepare_cpu_kernels(CpuKernels::native), UsageError);  // every engine verb passes here first
}

TEST(EngineEnvironment, ANativeCoreThisCpuCannotRunIsRefusedBeforeOpenBlasLoads) {
  const ScopedEnv omp("OMP_NUM_THREADS", nullptr);
  // Bulldozer's kernels use FMA4 and XOP, which no Intel CPU and no AMD CPU since Zen has.
  {
    const ScopedEnv core(kOpenblasCoretypeEnv, "Bulldozer");
    const std::string why = refusal(CpuKernels::native);
    EXPECT_EQ(why.rfind("OPENBLAS_CORETYPE=\"Bulldozer\" with --cpu-kernels native: this CPU has no fma4", 0), 0u) << why;
    EXPECT_NE(why.find("use --cpu-kernels portable"), std::string::npos) << why;
    EXPECT_THROW(prepare_cpu_kernels(CpuKernels::native), UsageError);
  }
  {
    const ScopedEnv core(kOpenblasCoretypeEnv, "excavator");  // OpenBLAS ignores case
    EXPECT_NE(refusal(CpuKernels::native).find("OpenBLAS's Excavator kernels"), std::string::npos);
  }
  {
    const ScopedEnv core(kOpenblasCoretypeEnv, "Opteron");
    if (!this_cpu_flags().has("3dnow")) {
      EXPECT_NE(refusal(CpuKernels::native).find("this CPU has no 3dnow"), std::string::npos);
    }
  }
  // Names OpenBLAS does not know are its own business (it detects the CPU); cores this CPU runs pass.
  for (const std::string& ok : executable_openblas_cores(this_cpu_flags())) {
    const ScopedEnv core(kOpenblasCoretypeEnv, ok.c_str());
    EXPECT_EQ(refusal(CpuKernels::native), "(accepted)") << ok;
  }
  const ScopedEnv core(kOpenblasCoretypeEnv, "NoSuchCore");
  EXPECT_EQ(refusal(CpuKernels::native), "(accepted)");
}

TEST(ErrorLine, EveryErrorIsOneLineOfBoundedLength) {
  EXPECT_STREQ(Error("a\nb\r\tc\x01").what(), "a\\nb\\r\\tc\\x01");
  std::string huge = "x.json: runs[0].sequence_bias = [";
  for (int i = 0; i < 3000; ++i) huge += "[[" + std::to_string(i) + "], 1.5], ";
  huge += "] is not allowed; allowed: a list of pairs";
  const std::string line = SpecError(huge).what();
  EXPECT_LE(line.size(), kMaxErrorLineBytes + 8);
  EXPECT_EQ(line.rfind("x.json: runs[0].sequence_bias = [", 0), 0u);  // where: kept
  EXPECT_NE(line.find("allowed: a list of pairs"), std::string::npos);  // the fix: kept
  EXPECT_NE(line.find("\u2026"), std::string::npos);
  // Cut at a character, never inside one.
  std::string mixed;
  for (int i = 0; i < 1500; ++i) mixed += "\u00e9";
  EXPECT_EQ(std::string(Error(mixed).what()).find("\xc3\u2026"), std::string::npos);
}

TEST(ErrorLine, AQuotedValueIsFlattenedAndShortened) {
  EXPECT_EQ(short_value("[[[1],\n   2.5],\n  [[3], 1]]"), "[[[1], 2.5], [[3], 1]]");
  const std::string shown = short_value(std::string(5000, '7'));
  EXPECT_EQ(shown, std::string(160, '7') + "\u2026 (5000 bytes)");
}

}  // namespace
}  // namespace genrepro::cli
