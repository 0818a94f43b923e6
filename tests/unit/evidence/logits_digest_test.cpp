// The logits digest: the evidence's value for a float32 row equals libxxhash's own XXH64 of
// the same floats (tests/data/logits-digest.json, made by tests/reference/logits_digest_reference.py
// with numpy and libxxhash), for every tail length; one ulp anywhere changes it; and the form the
// reader accepts.
#include "evidence/logits_digest.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace genrepro {
namespace {

constexpr std::size_t kVocab = 50257;

// The reference script's row: bits[i] = 0xC2000000 | ((i * 2654435761) mod 2^23), float32 in [-64, -32).
std::vector<float> reference_row() {
  std::vector<float> row(kVocab);
  for (std::size_t i = 0; i < kVocab; ++i) {
    const uint32_t bits = 0xC2000000u | static_cast<uint32_t>((static_cast<uint64_t>(i) * 2654435761ULL) & ((1u << 23) - 1));
    std::memcpy(&row[i], &bits, sizeof bits);
  }
  return row;
}

void add_ulp(float& v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  ++bits;
  std::memcpy(&v, &bits, sizeof bits);
}

nlohmann::json reference() {
  std::ifstream in(std::string(GENREPRO_SOURCE_DIR) + "/tests/data/logits-digest.json");
  return nlohmann::json::parse(in);
}

TEST(LogitsDigest, EqualsLibxxhashOnEveryPrefixOfAFloat32Row) {
  const nlohmann::json ref = reference();
  const std::vector<float> row = reference_row();
  ASSERT_EQ(ref["prefix_digests"].size(), 20u);
  for (const auto& [length, digest] : ref["prefix_digests"].items()) {
    const std::size_t n = std::stoul(length);
    EXPECT_EQ(logits_digest(row.data(), n), digest.get<std::string>()) << "first " << n << " floats";
  }
}

TEST(LogitsDigest, OneUlpFarBelowTheTopCandidatesChangesIt) {
  const nlohmann::json ref = reference();
  std::vector<float> row = reference_row();
  const std::string unchanged = logits_digest(row.data(), row.size());
  const std::size_t low = ref["one_ulp"]["index"].get<std::size_t>();
  // Thousands of logits above it: no top-N list would ever show this value.
  std::size_t above = 0;
  for (float v : row) above += v > row[low];
  EXPECT_GT(above, 1000u);
  add_ulp(row[low]);
  const std::string moved = logits_digest(row.data(), row.size());
  EXPECT_NE(moved, unchanged);
  EXPECT_EQ(moved, ref["one_ulp"]["digest"].get<std::string>());

  std::vector<float> top_moved = reference_row();
  add_ulp(top_moved[ref["one_ulp_top"]["index"].get<std::size_t>()]);
  EXPECT_EQ(logits_digest(top_moved.data(), top_moved.size()), ref["one_ulp_top"]["digest"].get<std::string>());
}

TEST(LogitsDigest, TheSignOfZeroIsABitToo) {
  const float plus[] = {0.0f, 1.0f}, minus[] = {-0.0f, 1.0f};
  EXPECT_NE(logits_digest(plus, 2), logits_digest(minus, 2));
}

TEST(LogitsDigest, FormNamesTheAlgorithm) {
  const std::vector<float> row = reference_row();
  const std::string d = logits_digest(row.data(), row.size());
  EXPECT_EQ(d.size(), 6u + 16u);
  EXPECT_EQ(logits_digest_problem(d), "");
  EXPECT_EQ(logits_digest_algorithm(d), "xxh64");
  EXPECT_EQ(logits_digest_problem("sha256:" + std::string(64, 'a')), "");  // another build's algorithm
  EXPECT_EQ(logits_digest_algorithm("sha256:" + std::string(64, 'a')), "sha256");
  for (const std::string& bad : std::vector<std::string>{"", "xxh64", "xxh64:", "xxh64:0123", "xxh64:0123456789ABCDEF", "xxh64:0123456789abcdef0",
                                ":0123456789abcdef", "Xxh64:0123456789abcdef", "7z:0123456789abcdef", "fnv:0123",
                                "sha256:" + std::string(63, 'a'), "xxh64 0123456789abcdef"})
    EXPECT_NE(logits_digest_problem(bad), "") << bad;
}

}  // namespace
}  // namespace genrepro
