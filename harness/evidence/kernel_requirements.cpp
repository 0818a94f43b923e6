#include "evidence/kernel_requirements.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace genrepro {

namespace {

std::string without_blanks(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

const KernelSet& kernel_set(const std::vector<KernelSet>& table, const std::string& name) {
  for (const KernelSet& k : table)
    if (name == k.name) return k;
  throw std::logic_error("no kernel set " + name + " in the table");
}

}  // namespace

const std::vector<KernelSet>& openblas_cores() {
  static const std::vector<KernelSet> cores = {
      {"Prescott", {"pni"}},
      {"Nehalem", {"sse4_2"}},
      {"Sandybridge", {"avx"}},
      {"Haswell", {"avx2", "fma"}},
      {"SkylakeX", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}},
  };
  return cores;
}

const std::vector<KernelSet>& aten_capabilities() {
  static const std::vector<KernelSet> capabilities = {
      {"default", {}},
      {"avx2", {"avx2", "fma"}},
      {"avx512", {"avx512vl", "avx512bw", "avx512dq", "fma"}},
  };
  return capabilities;
}

std::vector<std::string> portable_flags() {
  std::vector<std::string> flags;
  for (const KernelSet* k : {&kernel_set(openblas_cores(), kPortableBlasCoreEnv), &kernel_set(aten_capabilities(), kPortableAtenEnv)})
    for (const char* f : k->flags)
      if (std::find(flags.begin(), flags.end(), f) == flags.end()) flags.push_back(f);
  return flags;
}

CpuinfoFields read_cpuinfo(const std::string& path) {
  CpuinfoFields cpu;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = without_blanks(line.substr(0, colon));
    const std::string value = without_blanks(line.substr(colon + 1));
    if (key == "processor") {
      ++cpu.processors;
    } else if (key == "model name" && cpu.model.empty()) {
      cpu.model = value;
    } else if (key == "flags" && cpu.flags.empty()) {
      cpu.flags = value;
    }
  }
  return cpu;
}

CpuFlags::CpuFlags(const std::string& flags) {
  std::istringstream words(flags);
  for (std::string w; words >> w;) flags_.push_back(w);
  std::sort(flags_.begin(), flags_.end());
}

bool CpuFlags::has(const std::string& flag) const { return std::binary_search(flags_.begin(), flags_.end(), flag); }

bool CpuFlags::has_all(const std::vector<const char*>& flags) const {
  return std::all_of(flags.begin(), flags.end(), [&](const char* f) { return has(f); });
}

CpuFlags this_cpu_flags() { return CpuFlags(read_cpuinfo().flags); }

const KernelSet* find_openblas_core(const std::string& name) {
  static const std::vector<KernelSet> every = {
      {"Katmai", {"sse"}},
      {"Coppermine", {"sse"}},
      {"Northwood", {"sse2"}},
      {"Banias", {"sse2"}},
      {"Prescott", {"pni"}},
      {"Atom", {"ssse3"}},
      {"Core2", {"ssse3"}},
      {"Penryn", {"sse4_1"}},
      {"Dunnington", {"sse4_1"}},
      {"Nehalem", {"sse4_2"}},
      {"Athlon", {"3dnow"}},
      {"Opteron", {"3dnow"}},
      {"Opteron_SSE3", {"3dnow", "pni"}},
      {"Barcelona", {"3dnow", "sse4a"}},
      {"Nano", {"ssse3"}},
      {"Sandybridge", {"avx"}},
      {"Bobcat", {"ssse3", "sse4a"}},
      {"Bulldozer", {"avx", "fma4", "xop"}},
      {"Piledriver", {"avx", "fma4", "xop", "fma"}},
      {"Haswell", {"avx2", "fma"}},
      {"Steamroller", {"avx", "fma4", "xop", "fma"}},
      {"Excavator", {"avx2", "fma4", "xop", "fma"}},
      {"Zen", {"avx2", "fma"}},
      {"SkylakeX", {"avx512f", "avx512bw", "avx512dq", "avx512vl"}},
      {"CooperLake", {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16"}},
      {"SapphireRapids", {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512_bf16", "avx512_fp16"}},
  };
  const auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (const KernelSet& k : every)
    if (lower(k.name) == lower(name)) return &k;
  return nullptr;
}

std::vector<std::string> missing_flags(const KernelSet& core, const CpuFlags& cpu) {
  std::vector<std::string> missing;
  for (const char* f : core.flags)
    if (!cpu.has(f)) missing.push_back(f);
  return missing;
}

std::vector<std::string> executable_openblas_cores(const CpuFlags& cpu) {
  std::vector<std::string> cores;
  for (const KernelSet& c : openblas_cores())
    if (cpu.has_all(c.flags)) cores.push_back(c.name);
  return cores;
}

}  // namespace genrepro
