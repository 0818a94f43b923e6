// SHA-256 against the NIST FIPS 180-4 example vectors (csrc.nist.gov, "SHA256.pdf" and
// "SHA2_Additional.pdf"), and the file helper against the same vectors written to disk.
#include "util/sha256.hpp"

#include <string>

#include <gtest/gtest.h>

#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

constexpr const char* kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kAbc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* kTwoBlock = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
constexpr const char* kTwoBlockDigest = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr const char* kLong =
    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
constexpr const char* kLongDigest = "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1";
constexpr const char* kMillionA = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

TEST(Sha256, NistShortVectors) {
  EXPECT_EQ(sha256_hex(""), kEmpty);
  EXPECT_EQ(sha256_hex("abc"), kAbc);
  EXPECT_EQ(sha256_hex(kTwoBlock), kTwoBlockDigest);
  EXPECT_EQ(sha256_hex(kLong), kLongDigest);
}

TEST(Sha256, MillionAInOddSizedPieces) {
  // Pieces of 7 bytes never line up with the 64-byte block, exercising the buffering.
  Sha256 h;
  const std::string piece(7, 'a');
  size_t fed = 0;
  while (fed + piece.size() <= 1000000) {
    h.update(piece);
    fed += piece.size();
  }
  h.update(std::string(1000000 - fed, 'a'));
  EXPECT_EQ(to_hex(h.finish()), kMillionA);
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes are where the length field does or does not fit in the last block;
  // digests from coreutils sha256sum (printf 'a%.0s' {1..N} | sha256sum).
  EXPECT_EQ(sha256_hex(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(Sha256, FileStreamsTheSameDigestAndCountsBytes) {
  const test::ScratchDir dir("sha256");
  const FileDigest d = sha256_file(dir.write("million-a", std::string(1000000, 'a')));
  EXPECT_EQ(d.sha256, kMillionA);
  EXPECT_EQ(d.bytes, 1000000u);
}

TEST(Sha256, MissingFileNamesThePath) {
  try {
    sha256_file("/nonexistent/genrepro/weights.bin");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/genrepro/weights.bin: cannot open for hashing"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace genrepro
