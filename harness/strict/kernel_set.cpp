// Which kernel sets this CPU runs. The answer decides speed only: every set computes the same
// operations (strict/kernel_set.hpp), so nothing recorded as a result depends on it.
#include "strict/kernel_set.hpp"

#include <string>
#include <vector>

#include "util/errors.hpp"

namespace genrepro::strict {

const char* to_string(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::plain: return "plain";
    case KernelIsa::avx2: return "avx2";
    case KernelIsa::avx512: return "avx512";
    case KernelIsa::neon: return "neon";
  }
  return "unknown";
}

namespace {

// libgcc's cpuid reading also checks that the OS saves the vector registers (XGETBV), so a set is
// reported only where it can run.
bool cpu_runs(KernelIsa isa) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == KernelIsa::avx2) return avx2;
  if (isa == KernelIsa::avx512) return avx2 && __builtin_cpu_supports("avx512f");
#endif
  return isa == KernelIsa::plain || isa == KernelIsa::neon;
}

}  // namespace

std::vector<const KernelSet*> supported_kernel_sets() {
  std::vector<const KernelSet*> sets;
  for (const KernelSet* set : {plain_kernel_set(), neon_kernel_set(), avx2_kernel_set(), avx512_kernel_set()})
    if (set != nullptr && cpu_runs(set->isa)) sets.push_back(set);
  return sets;
}

const KernelSet& choose_kernel_set(const std::string& name) {
  const std::vector<const KernelSet*> sets = supported_kernel_sets();
  if (name.empty()) return *sets.back();
  std::string runnable;
  for (const KernelSet* set : sets) {
    if (name == to_string(set->isa)) return *set;
    runnable += std::string(runnable.empty() ? "" : ", ") + to_string(set->isa);
  }
  const bool known = name == "plain" || name == "avx2" || name == "avx512" || name == "neon";
  throw UsageError("GENREPRO_STRICT_ISA=" + name +
                   (known ? " names kernels this CPU or build cannot run" : " is not a kernel set") +
                   "; this process runs: " + runnable + " (unset it for the fastest; the choice never changes a bit)");
}

}  // namespace genrepro::strict
