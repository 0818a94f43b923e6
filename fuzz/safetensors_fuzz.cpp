// The safetensors reader on arbitrary bytes: it must either refuse the file with a ModelFileError
// (a genrepro::Error) or give tensors whose every byte can be read; never crash, hang or allocate
// by an unchecked number.
#include <cstdint>

#include "fuzz_input.hpp"
#include "model/safetensors.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const genrepro::fuzz::MemoryFile file(data, size);
  try {
    const genrepro::SafetensorsFile st = genrepro::SafetensorsFile::open(file.path());
    for (const auto& [name, info] : st.tensors()) {
      const std::vector<float> values = st.to_f32(info);
      if (static_cast<int64_t>(values.size()) != info.numel()) __builtin_trap();
    }
  } catch (const genrepro::Error&) {
  }
  return 0;
}
