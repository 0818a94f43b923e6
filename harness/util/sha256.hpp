#pragma once
// SHA-256 (FIPS 180-4), so evidence can pin the exact bytes of weights, tokenizer and experiment
// files, and so run ids can be derived from their parameters. OpenSSL's libcrypto computes it;
// checked against the NIST example vectors in tests/unit/util/sha256_test.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <memory>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of every includer

namespace genrepro {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // The 32-byte digest; the object must not be updated afterwards.
  std::array<uint8_t, 32> finish();

 private:
  std::unique_ptr<evp_md_ctx_st, void (*)(evp_md_ctx_st*)> ctx_;
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
