#pragma once
// Which CPU kernels OpenBLAS and ATen run, and what the CPU must have for each (docs/numerics.md,
// "CPU kernels"): the environment variables that choose them, the instructions each kernel set
// needs, what --cpu-kernels portable pins, and the one probe of this CPU's instructions. Every
// user (the portable check before the engine loads, the engine's read-back, the sensitivity
// matrix's kernels axis, the environment block) asks here. No libtorch: OpenBLAS reads the
// variables when it loads and ATen at its first dispatch, so they are set before either.
#include <string>
#include <vector>

namespace genrepro {

// The variables that choose the kernels.
inline constexpr const char* kOpenblasCoretypeEnv = "OPENBLAS_CORETYPE";     // OpenBLAS's GEMM kernels
inline constexpr const char* kAtenCpuCapabilityEnv = "ATEN_CPU_CAPABILITY";  // ATen's vectorised kernels

// One kernel set and the CPU flags its instructions need, spelled as /proc/cpuinfo spells them
// ("pni" is SSE3). A set whose flags the CPU lacks would crash (illegal instruction), not differ.
struct KernelSet {
  const char* name;                // the value its variable takes: Haswell, avx2
  std::vector<const char*> flags;  // every one needed
};

// OpenBLAS's x86-64 core types (OPENBLAS_CORETYPE), in the order of OpenBLAS's own detection.
const std::vector<KernelSet>& openblas_cores();
// ATen's CPU capabilities (ATEN_CPU_CAPABILITY), as libtorch's dispatch checks them: avx2 needs
// AVX2 and FMA3, avx512 AVX-512 VL, BW and DQ and FMA3.
const std::vector<KernelSet>& aten_capabilities();

// What portable sets before the engine loads and requires back after (openblas_get_corename()
// and ATen's "CPU capability usage"): the kernels every x86-64 CPU with AVX2 and FMA runs.
inline constexpr const char* kPortableBlasCoreEnv = "Haswell";  // OPENBLAS_CORETYPE
inline constexpr const char* kPortableBlasCore = "Haswell";     // openblas_get_corename()
inline constexpr const char* kPortableAtenEnv = "avx2";         // ATEN_CPU_CAPABILITY
inline constexpr const char* kPortableAtenCapability = "AVX2";  // at::show_config()

// The flags portable needs: its OpenBLAS core's, then its ATen capability's not yet named
// ("avx2", "fma").
std::vector<std::string> portable_flags();

// /proc/cpuinfo, the one place this CPU is asked: the first "model name", the first non-empty
// "flags" (the instructions the CPU has and the OS lets a process use, as the kernel names them)
// and how many processors it lists. Empty fields and 0 when the file cannot be read.
struct CpuinfoFields {
  std::string model;
  std::string flags;
  int processors = 0;
};
CpuinfoFields read_cpuinfo(const std::string& path = "/proc/cpuinfo");

// The flags of one CPU, to ask.
class CpuFlags {
 public:
  explicit CpuFlags(const std::string& flags);  // a "flags" value: names separated by blanks
  bool has(const std::string& flag) const;
  bool has_all(const std::vector<const char*>& flags) const;

 private:
  std::vector<std::string> flags_;  // sorted
};

// This CPU's flags (read_cpuinfo().flags).
CpuFlags this_cpu_flags();

// The OpenBLAS core types this CPU can execute, in openblas_cores()' order.
std::vector<std::string> executable_openblas_cores(const CpuFlags& cpu);

// Every core name OPENBLAS_CORETYPE takes (OpenBLAS's driver/others/dynamic.c, compared ignoring
// case) with the instructions its kernels use: openblas_cores() and the older and AMD-only ones
// (Opteron's 3DNow!, Bulldozer's to Excavator's FMA4 and XOP, ...) that a user may still name
// with --cpu-kernels native. Null for a name OpenBLAS does not know (it then detects the CPU).
const KernelSet* find_openblas_core(const std::string& name);
// The flags of `core` that `cpu` lacks (empty: it runs the core's kernels).
std::vector<std::string> missing_flags(const KernelSet& core, const CpuFlags& cpu);

}  // namespace genrepro
