// merge of shards made with different --cpu-kernels: the refusal names the flag and the setting of
// each file, not only the JSON path where their build records first differ.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "evidence/evidence_merge.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

Evidence with_kernels(CpuKernels setting, const std::string& core, const std::string& config) {
  Evidence e = test::make_evidence({test::make_run("a", DecodeMode::greedy, test::greedy_steps())});
  NumericsRecord n;
  n.kernels = KernelRecord{setting, core, "AVX2"};
  e.numerics = n;
  e.environment.blas.vendor = "openblas";
  e.environment.blas.config = config;
  return e;
}

std::string merge_error(const Evidence& a, const Evidence& b) {
  try {
    merge_evidence({{"portable.json", a}, {"native.json", b}});
  } catch (const Error& e) {
    return e.what();
  }
  return "(merged)";
}

TEST(MergeKernels, NativeBesidePortableNamesTheFlag) {
  const std::string why = merge_error(with_kernels(CpuKernels::portable, "Haswell", "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell"),
                                      with_kernels(CpuKernels::native, "Zen", "OpenBLAS 0.3.21 DYNAMIC_ARCH Zen"));
  EXPECT_EQ(why.rfind("native.json: was run with --cpu-kernels native, portable.json with --cpu-kernels portable", 0), 0u) << why;
  EXPECT_NE(why.find("run every shard with --cpu-kernels portable"), std::string::npos) << why;
}

TEST(MergeKernels, NativeShardsOfTwoKindsOfCpuSayWhy) {
  const std::string why = merge_error(with_kernels(CpuKernels::native, "SkylakeX", "OpenBLAS 0.3.21 DYNAMIC_ARCH SkylakeX"),
                                      with_kernels(CpuKernels::native, "Zen", "OpenBLAS 0.3.21 DYNAMIC_ARCH Zen"));
  EXPECT_EQ(why.rfind("native.json: its --cpu-kernels native kernels are Zen/AVX2, portable.json's are SkylakeX/AVX2", 0), 0u) << why;
}

}  // namespace
}  // namespace genrepro
