// The one-pass readers of tokenizer_files' fast path: on GPT-2's own files they give the model an
// independent reading gives (nlohmann's DOM, the byte table, the merges split by hand), JSON's
// escapes decode as nlohmann decodes them, and everything they do not accept returns false so
// that the checked readers name it (their messages: tokenizer_test.cpp, TokenizerFiles.*).
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tokenizer/bpe_model.hpp"
#include "tokenizer/byte_unicode.hpp"
#include "tokenizer/fast_load.hpp"

namespace genrepro {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.is_open()) << path;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The 256 single-byte tokens, ids 0..255 in byte order, each key as `spell` writes its symbol.
std::string byte_vocab(const ByteUnicodeTable& table, const std::function<std::string(int, const std::string&)>& spell,
                       const std::string& extra = "") {
  std::string text = "{";
  for (int b = 0; b < 256; ++b) {
    const std::string symbol = table.to_symbols(std::string(1, static_cast<char>(b)));
    text += (b ? ",\n " : "") + spell(b, symbol) + ": " + std::to_string(b);
  }
  return text + extra + "}";
}

std::string json_escaped_key(const std::string& symbol) { return nlohmann::json(symbol).dump(/*indent=*/-1, ' ', true); }

TEST(FastLoad, Gpt2sFilesGiveTheModelOfAnIndependentReading) {
  const std::string dir = GENREPRO_TEST_TOKENIZER_DIR;
  const std::string vocab_text = read_text(dir + "/encoder.json");
  const std::string merges_text = read_text(dir + "/vocab.bpe");
  const ByteUnicodeTable table;
  BpeModel model;
  VocabSymbols symbols;
  ASSERT_TRUE(read_vocab_fast(vocab_text, table, model, symbols));
  ASSERT_TRUE(read_merges_fast(merges_text, symbols, model));

  const nlohmann::json vocab = nlohmann::json::parse(vocab_text);
  ASSERT_EQ(model.token_bytes.size(), vocab.size());
  ASSERT_EQ(vocab.size(), 50257u);
  for (const auto& [key, id] : vocab.items()) {
    ASSERT_EQ(model.token_bytes.at(id.get<size_t>()), table.to_bytes(key, nullptr).value()) << key;
    ASSERT_EQ(symbols.id_of(key), id.get<int32_t>()) << key;
  }

  std::istringstream lines(merges_text);
  std::string line;
  std::getline(lines, line);  // the header
  int32_t rank = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    const std::string left = line.substr(0, space), right = line.substr(space + 1);
    const BpeMerge* merge = model.merges.find(BpeModel::pair_key(vocab.at(left).get<int32_t>(), vocab.at(right).get<int32_t>()));
    ASSERT_NE(merge, nullptr) << line;
    EXPECT_EQ(merge->rank, rank) << line;
    EXPECT_EQ(merge->merged_id, vocab.at(left + right).get<int32_t>()) << line;
    ++rank;
  }
  EXPECT_EQ(rank, 50000);
  EXPECT_EQ(model.merges.size(), 50000u);
  EXPECT_EQ(symbols.id_of("Ġthe"), 262);
  EXPECT_EQ(symbols.id_of("not a token"), -1);
}

TEST(FastLoad, EscapesAndSpacingReadAsNlohmannReadsThem) {
  const ByteUnicodeTable table;
  // Every symbol written as \uXXXX (encoder.json's way), every one raw (vocab.json's), and JSON's
  // short escapes where the symbol is one of their characters; with the spacing JSON allows.
  const std::string escaped = byte_vocab(table, [](int, const std::string& s) { return json_escaped_key(s); });
  const std::string raw = byte_vocab(table, [](int, const std::string& s) { return nlohmann::json(s).dump(); });
  const std::string short_escapes = byte_vocab(table, [](int b, const std::string& s) {
    if (b == '/') return std::string("\"\\/\"");
    if (b == '\\') return std::string("\"\\\\\"");
    if (b == '"') return std::string("\"\\\"\"");
    return nlohmann::json(s).dump();
  });
  for (const std::string& text : {escaped, raw, short_escapes, " \t\r\n" + raw + "\n\t "}) {
    BpeModel model;
    VocabSymbols symbols;
    ASSERT_TRUE(read_vocab_fast(text, table, model, symbols)) << text.substr(0, 80);
    const nlohmann::json expected = nlohmann::json::parse(text);
    for (const auto& [key, id] : expected.items())
      EXPECT_EQ(model.token_bytes.at(id.get<size_t>()), table.to_bytes(key, nullptr).value()) << key;
  }
  // A symbol above U+FFFF written as a surrogate pair decodes (and is no byte symbol: refused).
  BpeModel model;
  VocabSymbols symbols;
  const std::string emoji = byte_vocab(table, [](int, const std::string& s) { return nlohmann::json(s).dump(); },
                                       ", \"\\ud83d\\ude00\": 256");
  EXPECT_FALSE(read_vocab_fast(emoji, table, model, symbols));
}

TEST(FastLoad, WhatTheCheckedReaderMustNameIsLeftToIt) {
  const ByteUnicodeTable table;
  const auto raw = [](int, const std::string& s) { return nlohmann::json(s).dump(); };
  const std::string good = byte_vocab(table, raw);
  const auto accepts = [&](const std::string& text) {
    BpeModel model;
    VocabSymbols symbols;
    return read_vocab_fast(text, table, model, symbols);
  };
  ASSERT_TRUE(accepts(good));
  const std::string head = good.substr(0, good.size() - 1);  // without the closing brace
  for (const std::string& bad : {
           "\xEF\xBB\xBF" + good,              // a byte-order mark
           head + ", \"\\u0120\\u0120\": 0256}",  // a leading zero
           head + ", \"\\u0120\\u0120\": 256.0}", // a fractional id
           head + ", \"\\u0120\\u0120\": 2.56e2}",
           head + ", \"\\u0120\\u0120\": -256}",
           head + ", \"\\u0120\\u0120\": 257}",  // a gap in the ids
           head + ", \"\\u0120\\u0120\": 255}",  // an id twice
           head + ", \"!\": 256}",               // a token twice
           head + ", \"\\u0021\": 256}",          // a token twice, once escaped
           head + ", \"\": 256}",                 // the empty token
           head + ", \"\\ud83d\": 256}",          // a lone high surrogate
           head + ", \"\\ude00\": 256}",          // a lone low surrogate
           head + ", \"\\x41\": 256}",            // no such escape
           head + ", \"a\tb\": 256}",             // a raw control character
           head + ", \"\\u0120\\u0120\": 99999999999999999999}",
           head + ", \"\\u0120\\u0120\": \"256\"}",
           good + " x",                           // something after the object
           head + ",}",                           // a trailing comma
           std::string("{}"), std::string("[]"), std::string("")}) {
    EXPECT_FALSE(accepts(bad)) << bad.substr(bad.size() > 60 ? bad.size() - 60 : 0);
  }
}

TEST(FastLoad, MergesNeedTheHeaderAndTokensOnBothSidesAndInTheirMerge) {
  const ByteUnicodeTable table;
  const auto raw = [](int, const std::string& s) { return nlohmann::json(s).dump(); };
  BpeModel model;
  VocabSymbols symbols;
  ASSERT_TRUE(read_vocab_fast(byte_vocab(table, raw, ", \"ab\": 256, \"abc\": 257"), table, model, symbols));
  const auto accepts = [&](const std::string& text) { return read_merges_fast(text, symbols, model); };
  EXPECT_TRUE(accepts("#version: 0.2\na b\nab c"));
  ASSERT_EQ(model.merges.size(), 2u);
  const BpeMerge* ab = model.merges.find(BpeModel::pair_key('a', 'b'));
  const BpeMerge* abc = model.merges.find(BpeModel::pair_key(256, symbols.id_of("c")));
  ASSERT_TRUE(ab != nullptr && abc != nullptr);
  EXPECT_EQ(ab->merged_id, 256);  // a byte's id is its value here
  EXPECT_EQ(abc->rank, 1);
  EXPECT_TRUE(accepts("#version: 0.2\n"));
  EXPECT_TRUE(model.merges.empty());
  for (const std::string& bad : {"", "a b\n", "#version: 0.2\r\na b\r\n", "#version: 0.2\nab\n", "#version: 0.2\na  b\n",
                                 "#version: 0.2\na b c\n", "#version: 0.2\na b\n\n", "#version: 0.2\nb c\n",
                                 "#version: 0.2\na b\na b\n", "#version: 0.2\n a\n", "#version: 0.2\na \n"}) {
    EXPECT_FALSE(accepts(bad)) << bad;
  }
  VocabSymbols none;
  EXPECT_FALSE(read_merges_fast("#version: 0.2\na b\n", none, model));
}

}  // namespace
}  // namespace genrepro
