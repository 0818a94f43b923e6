#pragma once
// Reading GPT-2's tokenizer files into a BpeModel, with one-line errors naming the file, the
// entry or line, what was found and the fix.
//   vocab.json  (Hugging Face) = encoder.json (OpenAI): {"token": id, ...}, tokens spelled in
//                byte symbols (byte_unicode.hpp), ids 0..N-1 each used once.
//   merges.txt  (Hugging Face) = vocab.bpe (OpenAI): "#version: 0.2" then one "left right" pair
//                per line, highest priority first.
#include <string>

#include "tokenizer/bpe_model.hpp"
#include "tokenizer/byte_unicode.hpp"

namespace genrepro {

struct TokenizerFiles {
  std::string vocab;   // vocab.json or encoder.json
  std::string merges;  // merges.txt or vocab.bpe
};

// Finds the vocab and merges files in `dir` (Hugging Face names first, then OpenAI's).
TokenizerFiles locate_tokenizer_files(const std::string& dir);

// Reads both files; the merges are checked against the vocab (both sides and the result of
// every merge must be tokens). Throws TokenizerError.
BpeModel load_bpe_model(const TokenizerFiles& files, const ByteUnicodeTable& table);

}  // namespace genrepro
