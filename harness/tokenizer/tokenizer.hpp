#pragma once
// GPT-2's byte-level BPE tokenizer: text -> token ids -> exact bytes.
//
//   encode: split out literal "<|endoftext|>" (it becomes its vocab id, as in Hugging Face's
//           GPT2Tokenizer), pre-tokenize the rest with GPT-2's pattern (pretokenizer.hpp), and
//           BPE-encode each piece (bpe_model.hpp), remembering pieces already seen.
//   decode: concatenate the tokens' bytes. The result may end inside a UTF-8 character; the
//           *_for_display variants replace ill-formed bytes with U+FFFD so a person sees them.
// Linear in the input: each piece is matched once, and BPE is O(n log n) in the piece.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace genrepro {

// How encode() treats two things the frameworks decide differently when a control is given as text
// (docs/sampling.md, "Tokens given as text"). The prompt's rule is the default: Hugging Face's
// GPT2Tokenizer as genrepro has always encoded prompts.
struct EncodeOptions {
  // A literal "<|endoftext|>" becomes its id (Hugging Face's added token); false encodes it as
  // the seven ordinary tokens of its characters (llama.cpp's common_tokenize with parse_special false).
  bool special_tokens = true;
  // tokenizers' ByteLevel pre-tokenizer with add_prefix_space: a space before every part between
  // special tokens that does not already start with one (U+0020; an empty part stays empty).
  bool prefix_space = false;
};

class Gpt2Tokenizer {
 public:
  // The special token GPT-2 uses as end of text and document separator.
  static constexpr std::string_view kEndOfText = "<|endoftext|>";

  static Gpt2Tokenizer from_files(const std::string& vocab_path, const std::string& merges_path);
  // Finds vocab.json | encoder.json and merges.txt | vocab.bpe in `dir`.
  static Gpt2Tokenizer from_directory(const std::string& dir);

  // Throws TokenizerError if `text` is not valid UTF-8 (naming the byte offset).
  std::vector<int64_t> encode(std::string_view text) const;
  std::vector<int64_t> encode(std::string_view text, const EncodeOptions& options) const;
  // The exact bytes (possibly ill-formed UTF-8). Throws TokenizerError for an id outside the vocab.
  std::string decode(const std::vector<int64_t>& ids) const;
  // decode() with each ill-formed UTF-8 sequence replaced by U+FFFD.
  std::string decode_for_display(const std::vector<int64_t>& ids) const;
  // One token's bytes for display (same rule as decode_for_display).
  std::string token_text(int64_t id) const;
  // One token's exact bytes.
  const std::string& token_bytes(int64_t id) const;
  int64_t vocab_size() const;
  // The id of a token as vocab.json spells it ("<|endoftext|>", "Ġthe"), if it is one.
  std::optional<int64_t> token_id(std::string_view token) const;

  // The files it was loaded from.
  const std::string& vocab_path() const;
  const std::string& merges_path() const;

  // Forgets the word -> ids cache (for cold-cache benchmarks; encoding results never change).
  void clear_cache() const;

  // Copies share the (immutable) model and the (thread-safe) cache: copying is cheap, and
  // encode/decode may be called from several threads at once.
  Gpt2Tokenizer(const Gpt2Tokenizer&) = default;
  Gpt2Tokenizer(Gpt2Tokenizer&&) noexcept = default;
  Gpt2Tokenizer& operator=(const Gpt2Tokenizer&) = default;
  Gpt2Tokenizer& operator=(Gpt2Tokenizer&&) noexcept = default;
  ~Gpt2Tokenizer();

 private:
  struct State;
  explicit Gpt2Tokenizer(std::shared_ptr<const State> state);
  std::shared_ptr<const State> state_;
};

}  // namespace genrepro
