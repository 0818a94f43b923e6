// XXH64 against the test vectors of xxHash's own sanity checks (xxhash's tests/sanity_test_vectors.h,
// the values its cli prints: `xxh64sum` of an empty file is ef46db3751d8e999); longer inputs and
// every tail length are checked against libxxhash itself in tests/unit/evidence/logits_digest_test.cpp.
#include "util/xxh64.hpp"

#include <string>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

uint64_t of(const std::string& s, uint64_t seed = 0) { return xxh64(s.data(), s.size(), seed); }

TEST(Xxh64, KnownVectors) {
  EXPECT_EQ(of(""), 0xEF46DB3751D8E999ULL);
  EXPECT_EQ(of("a"), 0xD24EC4F1A98C6E5BULL);
  EXPECT_EQ(of("abc"), 0x44BC2CF5AD770999ULL);
  // 62 bytes: the four-lane stripe loop, then 8-byte, 4-byte and single-byte tails.
  EXPECT_EQ(of("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), 0x7639D419DE614EEDULL);
}

TEST(Xxh64, TheSeedChangesTheHash) {
  // libxxhash: XXH64("abc", 3, 12345)
  EXPECT_EQ(of("abc", 12345), 0x01700E64F6F23509ULL);
  EXPECT_NE(of("abc", 1), of("abc", 0));
}

}  // namespace
}  // namespace genrepro
