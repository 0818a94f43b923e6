// The tokenizer on arbitrary input. The first byte picks the direction:
//  even: the rest is text; encode it, and decode(encode(text)) must give the bytes back exactly
//        (GPT-2's byte-level BPE is lossless for every byte string);
//  odd:  the rest is a list of 4-byte ids, any value (negative, past the vocabulary): decode
//        must give text or a genrepro::Error, never read out of bounds.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "model/model_files.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"

namespace {
std::unique_ptr<genrepro::Gpt2Tokenizer> tokenizer;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tokenizer = std::make_unique<genrepro::Gpt2Tokenizer>(
      genrepro::Gpt2Tokenizer::from_directory(genrepro::default_tokenizer_dir()));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    try {
      const std::vector<int64_t> ids = tokenizer->encode(text);
      if (tokenizer->decode(ids) != text) __builtin_trap();
    } catch (const genrepro::Error&) {
    }
    return 0;
  }
  std::vector<int64_t> ids;
  for (size_t i = 1; i + 4 <= size; i += 4) {
    int32_t id;
    std::memcpy(&id, data + i, 4);
    ids.push_back(id);
  }
  try {
    (void)tokenizer->decode(ids);
    (void)tokenizer->decode_for_display(ids);
  } catch (const genrepro::Error&) {
  }
  return 0;
}
