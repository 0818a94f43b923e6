// `tokenize` input is read as written. --decode ids above int64 are not wrapped into an
// id nobody wrote (18446744073709551615 was reported as "token id -1"), and an --input line that
// names "text" twice is refused instead of silently taking the last one. Controls: the same
// inputs without the edit are accepted.
#include "tokenizer/token_lines.hpp"

#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;

const Gpt2Tokenizer& tokenizer() {
  static const Gpt2Tokenizer t = Gpt2Tokenizer::from_directory(GENREPRO_TEST_TOKENIZER_DIR);
  return t;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenLines, DecodeIdsAboveInt64AreRefusedAsWritten) {
  EXPECT_EQ(parse_id_array("[1169,7850]", "--decode TEXT"), (std::vector<int64_t>{1169, 7850}));
  const std::string e = error_of([] { parse_id_array("[18446744073709551615]", "--decode TEXT"); });
  EXPECT_THAT(e, HasSubstr("has 18446744073709551615 at index 0, larger than any token id"));
  EXPECT_THAT(e, ::testing::Not(HasSubstr("-1")));
  // In range for int64 but not for the vocabulary: the tokenizer names the id as written.
  const std::string big = error_of([] { tokenizer().decode(parse_id_array("[9223372036854775807]", "--decode TEXT")); });
  EXPECT_THAT(big, HasSubstr("9223372036854775807"));
}

TEST(TokenLines, AnInputLineNamingTextTwiceIsRefused) {
  std::ostringstream out;
  std::istringstream ok("{\"text\": \"the river\"}\n");
  encode_json_lines(tokenizer(), ok, "in.jsonl", out);
  EXPECT_EQ(out.str(), "[1169,7850]\n");
  std::istringstream twice("{\"text\": \"the river\", \"text\": \"bank\"}\n");
  const std::string e = error_of([&] { encode_json_lines(tokenizer(), twice, "in.jsonl", out); });
  EXPECT_THAT(e, HasSubstr("in.jsonl"));
  EXPECT_THAT(e, HasSubstr("text: key given twice"));
}

}  // namespace
}  // namespace genrepro
