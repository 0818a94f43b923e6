// config.json reading on arbitrary bytes: a Gpt2Config whose numbers are within the checked
// ranges, or a genrepro::Error naming the problem.
#include <cstdint>

#include "fuzz_input.hpp"
#include "model/model_config.hpp"
#include "util/errors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const genrepro::fuzz::MemoryFile file(data, size);
  try {
    const genrepro::Gpt2Config c = genrepro::read_gpt2_config(file.path());
    if (c.n_layer <= 0 || c.n_head <= 0 || c.n_embd <= 0 || c.vocab_size <= 0 || c.n_positions <= 0 ||
        c.n_embd % c.n_head != 0)
      __builtin_trap();  // a config that passed must be usable
  } catch (const genrepro::Error&) {
  }
  return 0;
}
