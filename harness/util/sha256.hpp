#pragma once
// SHA-256 (FIPS 180-4), so evidence can pin the exact bytes of weights, tokenizer and experiment
// files, and so run ids can be derived from their parameters. No dependency beyond the standard
// library; checked against the NIST example vectors in tests/unit/util/sha256_test.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace genrepro {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // The 32-byte digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> finish();

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string to_hex(const std::array<uint8_t, 32>& digest);

// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

struct FileDigest {
  std::string sha256;  // lower-case hex
  uint64_t bytes = 0;
};

// Streams the file through SHA-256 in fixed-size chunks (multi-GB weights are never held in
// memory). Throws genrepro::Error naming the file when it cannot be opened or read.
FileDigest sha256_file(const std::string& path);

}  // namespace genrepro
