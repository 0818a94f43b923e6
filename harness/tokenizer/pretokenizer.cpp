#include "tokenizer/pretokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>
#include <string>

#include "util/errors.hpp"

namespace genrepro {

namespace {

// Unicode's White_Space property (PropList.txt, unchanged since Unicode 6.3), written as the body
// of a character class. `\s` in GPT-2's pattern means exactly this set in Python's `regex`.
#define GENREPRO_WHITE_SPACE \
  "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"

// GPT-2's pattern with \s -> [WS] and \S -> [^WS]. The literal spaces are ' ' (U+0020) only.
constexpr const char* kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d"
    "| ?\\p{L}+"
    "| ?\\p{N}+"
    "| ?[^" GENREPRO_WHITE_SPACE "\\p{L}\\p{N}]+"
    "|[" GENREPRO_WHITE_SPACE "]+(?![^" GENREPRO_WHITE_SPACE "])"
    "|[" GENREPRO_WHITE_SPACE "]+";

#undef GENREPRO_WHITE_SPACE

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  const int n = pcre2_get_error_message(code, buffer, sizeof(buffer));
  return n < 0 ? "PCRE2 error " + std::to_string(code) : std::string(reinterpret_cast<char*>(buffer), n);
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

}  // namespace

struct Pretokenizer::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer() : compiled_(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kGpt2Pattern), PCRE2_ZERO_TERMINATED,
                                  PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (!compiled_->code) {
    // The pattern is a constant: failing here means this PCRE2 lacks Unicode support.
    throw std::logic_error("cannot compile GPT-2's pre-tokenizer pattern at offset " +
                           std::to_string(error_offset) + ": " + pcre2_message(error));
  }
  // JIT is an optimisation only; without it (PCRE2 built without JIT) the interpreter is used.
  compiled_->jit = pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE) == 0;
}

Pretokenizer::Pretokenizer(Pretokenizer&&) noexcept = default;
Pretokenizer& Pretokenizer::operator=(Pretokenizer&&) noexcept = default;
Pretokenizer::~Pretokenizer() = default;

const char* Pretokenizer::pattern() { return kGpt2Pattern; }

void Pretokenizer::split(std::string_view text, std::vector<TextPiece>& pieces) const {
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> match(
      pcre2_match_data_create_from_pattern(compiled_->code, nullptr));
  if (!match) throw std::bad_alloc();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos < text.size()) {
    const int rc = compiled_->jit
                       ? pcre2_jit_match(compiled_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK,
                                         match.get(), nullptr)
                       : pcre2_match(compiled_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK,
                                     match.get(), nullptr);
    if (rc < 0) {
      throw TokenizerError("pre-tokenizer: PCRE2 failed to match the text at byte " + std::to_string(pos) +
                           " (" + pcre2_message(rc) + "); the input is too unusual for the pattern engine, " +
                           "split it into shorter pieces");
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    // Every character matches one alternative, so matches are contiguous and non-empty.
    if (ovector[0] != pos || ovector[1] <= pos) {
      throw std::logic_error("pre-tokenizer: match at byte " + std::to_string(ovector[0]) +
                             " does not continue from byte " + std::to_string(pos));
    }
    pieces.push_back({pos, static_cast<size_t>(ovector[1] - pos)});
    pos = ovector[1];
  }
}

}  // namespace genrepro
