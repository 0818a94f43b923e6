#include "tokenizer/tokenizer.hpp"

#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "tokenizer/bpe_model.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "util/errors.hpp"
#include "tokenizer/pretokenizer.hpp"
#include "tokenizer/tokenizer_files.hpp"
#include "util/utf8.hpp"

namespace genrepro {

namespace {

// The word -> ids cache is bounded so that adversarial input cannot grow it without limit:
// 64Ki words of up to 256 bytes is at most ~20 MB, and English prose rarely has more than a
// few thousand distinct words. When full it is emptied and refilled (results never change).
constexpr size_t kMaxCachedWords = size_t{1} << 16;
constexpr size_t kMaxCachedWordBytes = 256;

}  // namespace

// Named, not anonymous: Gpt2Tokenizer::State (external linkage) holds one, which GCC flags
// (-Wsubobject-linkage) once the layer compiles as a unity file.
namespace tokenizer_detail {

// Word -> ids, shared by all copies of a tokenizer and safe to use from several threads.
class WordCache {
 public:
  bool find(std::string_view word, std::vector<int32_t>& out) const {
    std::shared_lock lock(mutex_);
    const auto it = ids_.find(std::string(word));
    if (it == ids_.end()) return false;
    out.insert(out.end(), it->second.begin(), it->second.end());
    return true;
  }

  void insert(std::string_view word, std::vector<int32_t> ids) {
    if (word.size() > kMaxCachedWordBytes) return;
    std::unique_lock lock(mutex_);
    if (ids_.size() >= kMaxCachedWords) ids_.clear();
    ids_.emplace(std::string(word), std::move(ids));
  }

  void clear() {
    std::unique_lock lock(mutex_);
    ids_.clear();
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::vector<int32_t>> ids_;
};

}  // namespace tokenizer_detail

struct Gpt2Tokenizer::State {
  TokenizerFiles files;
  ByteUnicodeTable table;
  BpeModel model;
  Pretokenizer pretokenizer;
  std::optional<int32_t> end_of_text_id;  // empty if the vocab has no "<|endoftext|>"
  mutable tokenizer_detail::WordCache cache;

  void check_id(int64_t id) const {
    if (id < 0 || id >= static_cast<int64_t>(model.token_bytes.size())) {
      throw TokenizerError("token id " + std::to_string(id) + " is not in the vocabulary '" + files.vocab +
                           "' (ids 0.." + std::to_string(model.token_bytes.size() - 1) +
                           "); pass ids made by this tokenizer");
    }
  }

  // Encodes text that holds no special token: pre-tokenize, then BPE each piece.
  void encode_ordinary(std::string_view text, std::vector<int64_t>& ids) const {
    std::vector<TextPiece> pieces;
    pretokenizer.split(text, pieces);
    std::vector<int32_t> word_ids;
    for (const TextPiece& piece : pieces) {
      const std::string_view word = text.substr(piece.offset, piece.length);
      word_ids.clear();
      if (!cache.find(word, word_ids)) {
        model.encode_word(word, word_ids);
        cache.insert(word, word_ids);
      }
      ids.insert(ids.end(), word_ids.begin(), word_ids.end());
    }
  }
};

Gpt2Tokenizer::Gpt2Tokenizer(std::shared_ptr<const State> state) : state_(std::move(state)) {}
Gpt2Tokenizer::~Gpt2Tokenizer() = default;

Gpt2Tokenizer Gpt2Tokenizer::from_files(const std::string& vocab_path, const std::string& merges_path) {
  auto state = std::make_shared<State>();
  state->files = {vocab_path, merges_path};
  state->model = load_bpe_model(state->files, state->table);
  const int32_t eot = state->model.id_of(kEndOfText);
  if (eot >= 0) state->end_of_text_id = eot;
  return Gpt2Tokenizer(std::move(state));
}

Gpt2Tokenizer Gpt2Tokenizer::from_directory(const std::string& dir) {
  const TokenizerFiles files = locate_tokenizer_files(dir);
  return from_files(files.vocab, files.merges);
}

std::vector<int64_t> Gpt2Tokenizer::encode(std::string_view text) const { return encode(text, EncodeOptions{}); }

std::vector<int64_t> Gpt2Tokenizer::encode(std::string_view text, const EncodeOptions& options) const {
  const size_t bad = find_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned>(static_cast<uint8_t>(text[bad])));
    throw TokenizerError("text to encode is not valid UTF-8: byte " + std::to_string(bad) + " is " + hex +
                         "; GPT-2's tokenizer encodes UTF-8 text, convert the input to UTF-8");
  }
  const bool special = options.special_tokens && state_->end_of_text_id;
  const auto encode_part = [&](std::string_view part, std::vector<int64_t>& ids) {
    if (options.prefix_space && !part.empty() && part.front() != ' ') {
      state_->encode_ordinary(" " + std::string(part), ids);
      return;
    }
    state_->encode_ordinary(part, ids);
  };
  std::vector<int64_t> ids;
  size_t pos = 0;
  while (true) {
    const size_t found = special ? text.find(kEndOfText, pos) : std::string_view::npos;
    encode_part(text.substr(pos, found == std::string_view::npos ? found : found - pos), ids);
    if (found == std::string_view::npos) break;
    ids.push_back(*state_->end_of_text_id);
    pos = found + kEndOfText.size();
  }
  return ids;
}

std::string Gpt2Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::string bytes;
  for (const int64_t id : ids) bytes += token_bytes(id);
  return bytes;
}

std::string Gpt2Tokenizer::decode_for_display(const std::vector<int64_t>& ids) const {
  return replace_invalid_utf8(decode(ids));
}

std::string Gpt2Tokenizer::token_text(int64_t id) const { return replace_invalid_utf8(token_bytes(id)); }

const std::string& Gpt2Tokenizer::token_bytes(int64_t id) const {
  state_->check_id(id);
  return state_->model.token_bytes[static_cast<size_t>(id)];
}

int64_t Gpt2Tokenizer::vocab_size() const { return static_cast<int64_t>(state_->model.token_bytes.size()); }

std::optional<int64_t> Gpt2Tokenizer::token_id(std::string_view token) const {
  const std::optional<std::string> bytes = state_->table.to_bytes(token, nullptr);
  if (!bytes) return std::nullopt;
  const int32_t id = state_->model.id_of(*bytes);
  if (id < 0) return std::nullopt;
  return id;
}

const std::string& Gpt2Tokenizer::vocab_path() const { return state_->files.vocab; }
const std::string& Gpt2Tokenizer::merges_path() const { return state_->files.merges; }

void Gpt2Tokenizer::clear_cache() const { state_->cache.clear(); }

}  // namespace genrepro
