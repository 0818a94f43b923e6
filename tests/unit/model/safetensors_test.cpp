// The safetensors reader and writer: round trip, exact F16/BF16 upcasts, and every corrupt case
// giving a one-line ModelFileError that names the file and the problem.
#include "model/safetensors.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "unit/model/model_test_util.hpp"

namespace genrepro {
namespace {

using test::ScratchDir;

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file from a header text and a data section, with the correct length prefix.
std::string st_bytes(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) {
    char b[4];
    std::memcpy(b, &v, 4);
    s.append(b, 4);
  }
  return s;
}

std::string u16_bytes(std::initializer_list<uint16_t> values) {
  std::string s;
  for (uint16_t v : values) {
    s.push_back(static_cast<char>(v & 0xff));
    s.push_back(static_cast<char>(v >> 8));
  }
  return s;
}

// Writes `bytes` as x.safetensors in `dir` and returns its path.
std::string write_st(const ScratchDir& dir, const std::string& bytes) {
  const std::string path = dir / "x.safetensors";
  test::write_bytes(path, bytes);
  return path;
}

TEST(Safetensors, RoundTripKeepsNamesShapesValuesAndMetadata) {
  ScratchDir dir;
  const std::string path = dir / "m.safetensors";
  std::vector<F32Tensor> tensors = {
      {"wte.weight", {2, 3}, {1.5f, -2.0f, 0.25f, 3.0e-8f, -0.0f, 65504.0f}},
      {"ln_f.bias", {3}, {7.0f, 8.0f, -9.5f}},
      {"scalar", {}, {42.0f}},
  };
  write_safetensors_f32(path, tensors, {{"format", "pt"}});
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  for (const F32Tensor& t : tensors) {
    const TensorInfo& info = f.info(t.name);
    EXPECT_EQ(info.dtype, TensorDType::F32);
    EXPECT_EQ(info.shape, t.shape);
    EXPECT_EQ(info.numel(), static_cast<int64_t>(t.values.size()));
    const std::vector<float> got = f.to_f32(info);
    ASSERT_EQ(got.size(), t.values.size());
    // Bitwise equality: the writer and reader must not touch the bits (-0.0 stays -0.0).
    EXPECT_EQ(0, std::memcmp(got.data(), t.values.data(), got.size() * sizeof(float))) << t.name;
  }
  // Contiguous, in the order given, and the data section starts 8-byte aligned.
  EXPECT_EQ(f.info("wte.weight").begin, 0u);
  EXPECT_EQ(f.info("ln_f.bias").begin, 24u);
  EXPECT_EQ(f.info("scalar").begin, 36u);
  const std::string raw = test::read_bytes(path);
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(raw[i]);
  EXPECT_EQ((8 + header_len) % 8, 0u);
  EXPECT_EQ(raw.size(), 8 + header_len + 40);
  // data() points at the tensor's bytes inside the mapping.
  float first = 0;
  std::memcpy(&first, f.data(f.info("ln_f.bias")), 4);
  EXPECT_EQ(first, 7.0f);
  // No temporary file is left behind by the atomic writer.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(Safetensors, F16UpcastIsExactOnHandValues) {
  // Half-precision bit patterns and their exact values (IEEE 754 binary16).
  const std::vector<std::pair<uint16_t, float>> cases = {
      {0x3c00, 1.0f},
      {0xc000, -2.0f},
      {0x3555, 0.333251953125f},       // 1365/4096
      {0x7bff, 65504.0f},              // largest finite half
      {0x0400, 6.103515625e-05f},      // smallest normal, 2^-14
      {0x03ff, 6.097555160522461e-05f},  // largest subnormal, 1023 * 2^-24
      {0x0001, 5.960464477539063e-08f},  // smallest subnormal, 2^-24
      {0x8001, -5.960464477539063e-08f},
      {0x0000, 0.0f},
      {0x7c00, std::numeric_limits<float>::infinity()},
      {0xfc00, -std::numeric_limits<float>::infinity()},
  };
  std::string data;
  for (const auto& c : cases) data += u16_bytes({c.first});
  const std::string header = R"({"h":{"dtype":"F16","shape":[)" + std::to_string(cases.size()) +
                             R"(],"data_offsets":[0,)" + std::to_string(data.size()) + "]}}";
  ScratchDir dir;
  const SafetensorsFile f = SafetensorsFile::open(write_st(dir, st_bytes(header, data)));
  const std::vector<float> got = f.to_f32(f.info("h"));
  ASSERT_EQ(got.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(got[i], cases[i].second) << "bits 0x" << std::hex << cases[i].first;
  EXPECT_TRUE(std::signbit(got[8]) == false);

  // Negative zero and NaN keep their sign / NaN-ness.
  const std::string nan_header = R"({"n":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})";
  const SafetensorsFile g = SafetensorsFile::open(write_st(dir, st_bytes(nan_header, u16_bytes({0x8000, 0x7e00}))));
  const std::vector<float> z = g.to_f32(g.info("n"));
  EXPECT_TRUE(z[0] == 0.0f && std::signbit(z[0]));
  EXPECT_TRUE(std::isnan(z[1]));
}

TEST(Safetensors, BF16UpcastIsExactOnHandValues) {
  // bfloat16 is the top half of a float32.
  const std::vector<std::pair<uint16_t, float>> cases = {
      {0x3f80, 1.0f},
      {0xc040, -3.0f},
      {0x3eab, 0.333984375f},               // 0x3eab0000
      {0x4049, 3.140625f},                  // pi truncated
      {0x0001, 9.183549615799121e-41f},     // a float32 subnormal
      {0x7f7f, 3.3895313892515355e+38f},    // largest finite bf16
      {0x7f80, std::numeric_limits<float>::infinity()},
  };
  std::string data;
  for (const auto& c : cases) data += u16_bytes({c.first});
  const std::string header = R"({"b":{"dtype":"BF16","shape":[)" + std::to_string(cases.size()) +
                             R"(],"data_offsets":[0,)" + std::to_string(data.size()) + "]}}";
  ScratchDir dir;
  const SafetensorsFile f = SafetensorsFile::open(write_st(dir, st_bytes(header, data)));
  const std::vector<float> got = f.to_f32(f.info("b"));
  ASSERT_EQ(got.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(got[i], cases[i].second) << "bits 0x" << std::hex << cases[i].first;
}

TEST(Safetensors, AcceptsMetadataAndEmptyTensors) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"e":{"dtype":"F32","shape":[0,4],"data_offsets":[4,4]},)"
      R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  ScratchDir dir;
  const SafetensorsFile f = SafetensorsFile::open(write_st(dir, st_bytes(header, f32_bytes({2.5f}))));
  EXPECT_EQ(f.info("e").numel(), 0);
  EXPECT_TRUE(f.to_f32(f.info("e")).empty());
  EXPECT_EQ(f.to_f32(f.info("a")), std::vector<float>{2.5f});
  EXPECT_FALSE(f.has("__metadata__"));
}

// ---- corrupt files: each is rejected at open() with a message naming the file and the problem ----

TEST(SafetensorsCorrupt, HeaderLengthPastTheEnd) {
  ScratchDir dir;
  const std::string path = write_st(dir, le64(1000) + "{}");
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError,
                   path + ": header length 1000 exceeds the 2 bytes after it");
}

TEST(SafetensorsCorrupt, GarbageHeaderLengthDoesNotAllocate) {
  // All-ones length: must be rejected by arithmetic, never by trying to allocate 16 EiB.
  ScratchDir dir;
  const std::string path = write_st(dir, le64(~0ull) + std::string(64, 'x'));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError, "header length 18446744073709551615 exceeds");
}

TEST(SafetensorsCorrupt, GarbageHeader) {
  ScratchDir dir;
  const std::string path = write_st(dir, st_bytes("{not json at all", ""));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError, path + ": header is not valid JSON");
  const std::string path2 = write_st(dir, st_bytes("[1, 2, 3]", ""));
  EXPECT_THROW_MSG(SafetensorsFile::open(path2), ModelFileError, "header is JSON but not an object");
  const std::string path3 = write_st(dir, st_bytes(R"({"a": 5})", ""));
  EXPECT_THROW_MSG(SafetensorsFile::open(path3), ModelFileError, "tensor 'a' header entry is not an object");
  const std::string path4 = write_st(dir, st_bytes(R"({"a": {"dtype": "F32", "shape": [1]}})", "abcd"));
  EXPECT_THROW_MSG(SafetensorsFile::open(path4), ModelFileError, "tensor 'a' header entry lacks \"data_offsets\"");
}

TEST(SafetensorsCorrupt, OffsetsPastTheEnd) {
  ScratchDir dir;
  const std::string header = R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})";
  const std::string path = write_st(dir, st_bytes(header, std::string(16, '\0')));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError,
                   path + ": tensor 'w' has data_offsets [8, 24] past the end of the 16-byte data section");
}

TEST(SafetensorsCorrupt, OverlappingTensors) {
  ScratchDir dir;
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})";
  const std::string path = write_st(dir, st_bytes(header, std::string(20, '\0')));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError, "tensors 'a' [0, 16) and 'b' [12, 20) overlap");
}

TEST(SafetensorsCorrupt, OverlapHiddenBehindAnEmptyTensor) {
  // An empty tensor sorted between two overlapping ones must not hide the overlap.
  ScratchDir dir;
  const std::string header =
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"e":{"dtype":"F32","shape":[0],"data_offsets":[8,8]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})";
  const std::string path = write_st(dir, st_bytes(header, std::string(20, '\0')));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError, "tensors 'a' [0, 16) and 'b' [12, 20) overlap");
}

TEST(SafetensorsCorrupt, UnknownDtypeNamesTensorAndDtype) {
  ScratchDir dir;
  const std::string header = R"({"h.0.attn.bias":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})";
  const std::string path = write_st(dir, st_bytes(header, std::string(8, '\0')));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError,
                   path + ": tensor 'h.0.attn.bias' has dtype I64, allowed: F32, F16, BF16");
}

TEST(SafetensorsCorrupt, ShapeContradictsByteSize) {
  ScratchDir dir;
  const std::string header = R"({"w":{"dtype":"F16","shape":[3],"data_offsets":[0,8]}})";
  const std::string path = write_st(dir, st_bytes(header, std::string(8, '\0')));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError,
                   "tensor 'w' has shape [3] F16 (6 bytes) but data_offsets span 8 bytes");
}

TEST(SafetensorsCorrupt, BadShapesAndOffsets) {
  ScratchDir dir;
  const std::string huge = R"({"w":{"dtype":"F32","shape":[1099511627776,1099511627776,1099511627776],"data_offsets":[0,8]}})";
  EXPECT_THROW_MSG(SafetensorsFile::open(write_st(dir, st_bytes(huge, std::string(8, '\0')))), ModelFileError,
                   "whose byte size overflows");
  const std::string negative = R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})";
  EXPECT_THROW_MSG(SafetensorsFile::open(write_st(dir, st_bytes(negative, std::string(8, '\0')))), ModelFileError,
                   "has shape [-2], expected non-negative integers");
  const std::string reversed = R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})";
  EXPECT_THROW_MSG(SafetensorsFile::open(write_st(dir, st_bytes(reversed, std::string(8, '\0')))), ModelFileError,
                   "with end before begin");
  const std::string offsets = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})";
  EXPECT_THROW_MSG(SafetensorsFile::open(write_st(dir, st_bytes(offsets, std::string(8, '\0')))), ModelFileError,
                   "expected [begin, end] with non-negative integers");
}

TEST(SafetensorsCorrupt, MissingTensorViaInfo) {
  ScratchDir dir;
  const std::string path = dir / "m.safetensors";
  write_safetensors_f32(path, {{"wte.weight", {1}, {1.0f}}});
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_THROW_MSG(f.info("wpe.weight"), ModelFileError,
                   path + ": missing tensor 'wpe.weight' (the file holds 1 tensors)");
}

TEST(SafetensorsCorrupt, TruncatedFile) {
  ScratchDir dir;
  const std::string good = dir / "good.safetensors";
  write_safetensors_f32(good, {{"a", {16}, std::vector<float>(16, 1.0f)}});
  const std::string bytes = test::read_bytes(good);
  // Cut inside the data section: the tensor now runs past the end.
  const std::string path = write_st(dir, bytes.substr(0, bytes.size() - 10));
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError, "tensor 'a' has data_offsets [0, 64] past the end");
  // Cut inside the header: the header length now exceeds the file.
  const std::string path2 = write_st(dir, bytes.substr(0, 20));
  EXPECT_THROW_MSG(SafetensorsFile::open(path2), ModelFileError, "exceeds the 12 bytes after it");
  // Cut inside the length itself.
  const std::string path3 = write_st(dir, bytes.substr(0, 5));
  EXPECT_THROW_MSG(SafetensorsFile::open(path3), ModelFileError,
                   "file is 5 bytes, too short for the 8-byte safetensors header length");
}

TEST(SafetensorsCorrupt, EmptyFile) {
  ScratchDir dir;
  const std::string path = write_st(dir, "");
  EXPECT_THROW_MSG(SafetensorsFile::open(path), ModelFileError,
                   path + ": file is 0 bytes, too short for the 8-byte safetensors header length");
}

TEST(SafetensorsCorrupt, DirectoryOrMissingFile) {
  ScratchDir dir;
  EXPECT_THROW_MSG(SafetensorsFile::open(dir.path().string()), ModelFileError,
                   dir.path().string() + ": not a regular file (a directory, pipe, FIFO or device)");
  EXPECT_THROW_MSG(SafetensorsFile::open(dir / "absent.safetensors"), ModelFileError,
                   dir / "absent.safetensors" + ": cannot open (No such file or directory)");
}

TEST(SafetensorsWriter, RejectsValueCountThatContradictsShape) {
  ScratchDir dir;
  const std::string path = dir / "w.safetensors";
  EXPECT_THROW(write_safetensors_f32(path, {{"a", {2, 2}, {1.0f}}}), std::invalid_argument);
  // Nothing is left behind: neither the target nor a temporary file.
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace genrepro
