// The tokenizer's one-pass vocab reader against nlohmann's parser on arbitrary text: whatever the
// fast reader accepts must be a JSON object that nlohmann reads to the same tokens and ids (so the
// checked reader, which it stands in for, would have accepted it too), and it must never read out
// of bounds. Seeds: any JSON object; byte symbols are mostly printable ASCII, so "{"a": 0}"-like
// inputs reach the id checks.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tokenizer/bpe_model.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "tokenizer/fast_load.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const genrepro::ByteUnicodeTable table;
  genrepro::BpeModel model;
  genrepro::VocabSymbols symbols;
  if (!genrepro::read_vocab_fast(text, table, model, symbols)) return 0;
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error&) {
    __builtin_trap();  // the fast reader took what is not JSON
  }
  if (!parsed.is_object() || parsed.size() != model.token_bytes.size()) __builtin_trap();
  for (const auto& [key, id] : parsed.items()) {
    if (!id.is_number_unsigned() || id.get<uint64_t>() >= model.token_bytes.size()) __builtin_trap();
    const auto bytes = table.to_bytes(key, nullptr);
    if (!bytes || model.token_bytes[id.get<size_t>()] != *bytes) __builtin_trap();
    if (symbols.id_of(key) != id.get<int32_t>()) __builtin_trap();
  }
  return 0;
}
