#pragma once
// The data of the framework reference tests (tests/reference/frameworks.cmake), without libtorch:
// the logits vectors tests/reference/hf_processors.py writes (vectors.f32, one float32 vector after
// another, sizes in cases.json), a case's config as genrepro's SamplingParams, and the hash both
// sides compute over kept ids and bits. The engine's tests (unit/engine/framework_reference.hpp)
// and the model-free chain's (unit/sampling/) read the same cases.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/framework_params.hpp"
#include "params/run_params.hpp"

namespace genrepro::test {

inline std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// vectors.f32 cut by `sizes`.
inline std::vector<std::vector<float>> read_vectors(const std::string& path, const std::vector<int64_t>& sizes) {
  const std::string blob = read_file_bytes(path);
  std::vector<std::vector<float>> out;
  size_t offset = 0;
  for (int64_t n : sizes) {
    std::vector<float> v(static_cast<size_t>(n));
    if (offset + v.size() * 4 > blob.size()) throw std::runtime_error(path + " is shorter than its cases say");
    std::memcpy(v.data(), blob.data() + offset, v.size() * 4);
    offset += v.size() * 4;
    out.push_back(std::move(v));
  }
  return out;
}

// tests/reference/framework_hash.py's digest: h = sum of w_i * P^(i+1) mod 2^64 over 64-bit words
// w_0, w_1, ... (P odd, so a change to any one word, or a word moved, changes h). A dot product
// rather than FNV-1a's chain, so the Python side computes it in one numpy pass.
class WordHash {
 public:
  void add(uint64_t word) {
    power_ *= kPrime;
    h_ += word * power_;
  }
  std::string str() const { return std::to_string(h_); }

 private:
  static constexpr uint64_t kPrime = 0x100000001B3ull;
  uint64_t h_ = 0;
  uint64_t power_ = 1;
};

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A reference config ({"name", "seed", "greedy", "temperature", "top_k", "top_p", "order", and
// control keys}) as the SamplingParams of framework `f` an experiment file with those keys gives.
inline SamplingParams params_of(const nlohmann::json& c, Framework f) {
  SamplingParams s;
  s.mode = c.value("greedy", false) ? DecodeMode::greedy : DecodeMode::sample;
  resolve_framework(s, f);
  s.seed = c.at("seed").get<uint64_t>();
  for (const auto& item : c.items()) {
    const std::string& key = item.key();
    if (key == "temperature") s.temperature = item.value().get<double>();
    else if (key == "top_k") s.top_k = item.value().get<int64_t>();
    else if (key == "top_p") s.top_p = item.value().get<double>();
    else if (key == "order") {
      const auto order = check_framework_order(f, item.value().get<std::vector<std::string>>());
      if (!order.value) throw std::runtime_error("bad order in the reference config");
      s.sampler_order = *order.value;
    } else if (find_control_key(key)) {
      if (read_control(s.controls, key, item.value())) throw std::runtime_error("bad " + key + " in the reference config");
    }
  }
  return s;
}

}  // namespace genrepro::test
