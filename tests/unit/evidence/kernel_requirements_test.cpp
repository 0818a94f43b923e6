// Which CPU instructions each kernel set needs (evidence/kernel_requirements.hpp), held to the
// libraries' own rules (OpenBLAS's core types, libtorch's dispatch), and the one CPU probe held to
// the CPU's own cpuid as the compiler's __builtin_cpu_supports reads it: an independent view of
// the same instructions.
#include "evidence/kernel_requirements.hpp"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"

namespace genrepro {
namespace {

std::vector<std::string> flags_of(const std::vector<KernelSet>& table, const std::string& name) {
  for (const KernelSet& k : table)
    if (name == k.name) return {k.flags.begin(), k.flags.end()};
  ADD_FAILURE() << "no " << name << " in the table";
  return {};
}

std::vector<std::string> names_of(const std::vector<KernelSet>& table) {
  std::vector<std::string> names;
  for (const KernelSet& k : table) names.push_back(k.name);
  return names;
}

using Flags = std::vector<std::string>;

TEST(KernelRequirements, OpenblasCoresInDetectionOrder) {
  EXPECT_EQ(names_of(openblas_cores()), (Flags{"Prescott", "Nehalem", "Sandybridge", "Haswell", "SkylakeX"}));
  EXPECT_EQ(flags_of(openblas_cores(), "Prescott"), (Flags{"pni"}));  // /proc/cpuinfo's name for SSE3
  EXPECT_EQ(flags_of(openblas_cores(), "Haswell"), (Flags{"avx2", "fma"}));
  EXPECT_EQ(flags_of(openblas_cores(), "SkylakeX"), (Flags{"avx512f", "avx512bw", "avx512dq", "avx512vl"}));
}

TEST(KernelRequirements, AtenCapabilitiesAsLibtorchDispatchChecksThem) {
  EXPECT_EQ(flags_of(aten_capabilities(), "default"), Flags{});
  EXPECT_EQ(flags_of(aten_capabilities(), "avx2"), (Flags{"avx2", "fma"}));
  EXPECT_EQ(flags_of(aten_capabilities(), "avx512"), (Flags{"avx512vl", "avx512bw", "avx512dq", "fma"}));
}

TEST(KernelRequirements, PortableNeedsAvx2AndFmaOnce) {
  EXPECT_STREQ(kOpenblasCoretypeEnv, "OPENBLAS_CORETYPE");
  EXPECT_STREQ(kAtenCpuCapabilityEnv, "ATEN_CPU_CAPABILITY");
  EXPECT_STREQ(kPortableBlasCoreEnv, "Haswell");
  EXPECT_STREQ(kPortableAtenEnv, "avx2");
  EXPECT_EQ(portable_flags(), (Flags{"avx2", "fma"}));
}

TEST(KernelRequirements, ExecutableCoresNeedEveryFlag) {
  EXPECT_EQ(executable_openblas_cores(CpuFlags("fpu sse2 pni sse4_2 avx avx2 fma")),
            (Flags{"Prescott", "Nehalem", "Sandybridge", "Haswell"}));
  // AVX2 without FMA (a hypervisor can mask FMA) is not Haswell; AVX-512F alone is not SkylakeX.
  EXPECT_EQ(executable_openblas_cores(CpuFlags("pni sse4_2 avx avx2 avx512f")), (Flags{"Prescott", "Nehalem", "Sandybridge"}));
  EXPECT_EQ(executable_openblas_cores(CpuFlags("")), Flags{});
  const CpuFlags cpu("  avx2\tfma ");
  EXPECT_TRUE(cpu.has("fma"));
  EXPECT_FALSE(cpu.has("fm"));
  EXPECT_FALSE(cpu.has_all({"avx2", "avx"}));
}

TEST(KernelRequirements, ReadsCpuinfoAsTheKernelWritesIt) {
  const test::ScratchDir dir("cpuinfo");
  const std::string path = dir.write("cpuinfo",
                                     "processor\t: 0\n"
                                     "model name\t: Some CPU @ 2.0GHz \n"
                                     "flags\t\t: fpu avx2 fma\n"
                                     "vmx flags\t: vnmi ept\n"
                                     "\n"
                                     "processor\t: 1\n"
                                     "model name\t: Another CPU\n"
                                     "flags\t\t: fpu\n");
  const CpuinfoFields cpu = read_cpuinfo(path);
  EXPECT_EQ(cpu.processors, 2);
  EXPECT_EQ(cpu.model, "Some CPU @ 2.0GHz");
  EXPECT_EQ(cpu.flags, "fpu avx2 fma");
  const CpuinfoFields none = read_cpuinfo(dir / "absent");
  EXPECT_EQ(none.processors, 0);
  EXPECT_EQ(none.flags, "");
}

// What cpuid says of a flag the tables name, through the compiler's builtin (its own names:
// "sse3" is cpuinfo's "pni", "sse4.2" its "sse4_2"); nullopt off x86 or for a flag not mapped.
std::optional<bool> cpuid_has(const std::string& flag) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (flag == "pni") return __builtin_cpu_supports("sse3") != 0;
  if (flag == "sse4_2") return __builtin_cpu_supports("sse4.2") != 0;
  if (flag == "avx") return __builtin_cpu_supports("avx") != 0;
  if (flag == "avx2") return __builtin_cpu_supports("avx2") != 0;
  if (flag == "fma") return __builtin_cpu_supports("fma") != 0;
  if (flag == "avx512f") return __builtin_cpu_supports("avx512f") != 0;
  if (flag == "avx512bw") return __builtin_cpu_supports("avx512bw") != 0;
  if (flag == "avx512dq") return __builtin_cpu_supports("avx512dq") != 0;
  if (flag == "avx512vl") return __builtin_cpu_supports("avx512vl") != 0;
#endif
  (void)flag;
  return std::nullopt;
}

TEST(KernelRequirements, ProbeAgreesWithCpuidOnThisMachine) {
#if !(defined(__x86_64__) || defined(__i386__))
  GTEST_SKIP() << "the tables are x86-64's";
#endif
  const CpuFlags cpu = this_cpu_flags();
  EXPECT_TRUE(cpu.has("sse2")) << "every x86-64 CPU has SSE2: /proc/cpuinfo was not read";
  for (const std::vector<KernelSet>* table : {&openblas_cores(), &aten_capabilities()})
    for (const KernelSet& k : *table)
      for (const char* flag : k.flags) {
        const std::optional<bool> cpuid = cpuid_has(flag);
        ASSERT_TRUE(cpuid.has_value()) << flag << " (of " << k.name << ") has no cpuid check here";
        EXPECT_EQ(cpu.has(flag), *cpuid) << flag << " (of " << k.name << "): /proc/cpuinfo and cpuid disagree";
      }
  bool haswell_runs = false;
  for (const std::string& core : executable_openblas_cores(cpu)) haswell_runs = haswell_runs || core == "Haswell";
  EXPECT_EQ(haswell_runs, *cpuid_has("avx2") && *cpuid_has("fma"));
}

}  // namespace
}  // namespace genrepro
