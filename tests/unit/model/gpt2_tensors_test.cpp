// The GPT-2 tensor list implied by config.json and the check that a checkpoint matches it:
// prefixes, skipped buffers, missing tensors and contradicting shapes.
#include "model/gpt2_tensors.hpp"

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "unit/model/model_test_util.hpp"

namespace genrepro {
namespace {

using test::ScratchDir;

Gpt2Config small_config() {
  Gpt2Config c;
  c.vocab_size = 10;
  c.n_positions = 6;
  c.n_embd = 8;
  c.n_layer = 2;
  c.n_head = 2;
  return c;
}

// A checkpoint holding every expected tensor (zeros), optionally renamed or reshaped.
std::string write_checkpoint(const ScratchDir& dir, const Gpt2Config& c, const std::string& prefix = "",
                             const std::string& reshape_name = "", std::vector<int64_t> reshape = {},
                             const std::string& drop = "") {
  std::vector<F32Tensor> tensors;
  for (const ExpectedTensor& t : expected_gpt2_tensors(c)) {
    if (t.name == drop) continue;
    const std::vector<int64_t> shape = t.name == reshape_name ? reshape : t.shape;
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    tensors.push_back({prefix + t.name, shape, std::vector<float>(static_cast<size_t>(n), 0.0f)});
  }
  // The causal-mask buffer the official checkpoint carries, with a deliberately odd shape:
  // it must be skipped, not checked.
  tensors.push_back({prefix + "h.0.attn.bias", {1, 1, 2, 2}, {1, 0, 1, 1}});
  tensors.push_back({prefix + "h.1.attn.masked_bias", {}, {-1e4f}});
  const std::string path = dir / "model.safetensors";
  write_safetensors_f32(path, tensors);
  return path;
}

TEST(Gpt2Tensors, ExpectedListMatchesTheOfficialCheckpoint) {
  Gpt2Config c;  // GPT-2 small
  const auto list = expected_gpt2_tensors(c);
  // 2 embeddings + 12 per block + 2 for ln_f: 148 parameters, as in the official gpt2 file
  // (which has 160 entries including the 12 h.N.attn.bias buffers).
  ASSERT_EQ(list.size(), 2u + 12u * 12u + 2u);
  EXPECT_EQ(list.front().name, "wte.weight");
  EXPECT_EQ(list.front().shape, (std::vector<int64_t>{50257, 768}));
  EXPECT_EQ(list[1].shape, (std::vector<int64_t>{1024, 768}));
  auto find = [&](const std::string& name) {
    for (const auto& t : list)
      if (t.name == name) return t.shape;
    ADD_FAILURE() << "no " << name;
    return std::vector<int64_t>{};
  };
  EXPECT_EQ(find("h.11.attn.c_attn.weight"), (std::vector<int64_t>{768, 2304}));
  EXPECT_EQ(find("h.0.attn.c_attn.bias"), (std::vector<int64_t>{2304}));
  EXPECT_EQ(find("h.0.attn.c_proj.weight"), (std::vector<int64_t>{768, 768}));
  EXPECT_EQ(find("h.3.mlp.c_fc.weight"), (std::vector<int64_t>{768, 3072}));
  EXPECT_EQ(find("h.3.mlp.c_fc.bias"), (std::vector<int64_t>{3072}));
  EXPECT_EQ(find("h.3.mlp.c_proj.weight"), (std::vector<int64_t>{3072, 768}));
  EXPECT_EQ(find("ln_f.bias"), (std::vector<int64_t>{768}));
  for (const auto& t : list) EXPECT_EQ(t.name.find("lm_head"), std::string::npos);  // tied to wte
}

TEST(Gpt2Tensors, SkippedBuffers) {
  EXPECT_TRUE(is_skipped_gpt2_buffer("h.0.attn.bias"));
  EXPECT_TRUE(is_skipped_gpt2_buffer("h.11.attn.masked_bias"));
  EXPECT_TRUE(is_skipped_gpt2_buffer("transformer.h.3.attn.bias"));
  EXPECT_FALSE(is_skipped_gpt2_buffer("h.0.attn.c_attn.bias"));
  EXPECT_FALSE(is_skipped_gpt2_buffer("h.0.mlp.c_fc.bias"));
  EXPECT_FALSE(is_skipped_gpt2_buffer("h..attn.bias"));
  EXPECT_FALSE(is_skipped_gpt2_buffer("h.0.attn.bias.x"));
}

TEST(Gpt2Tensors, CompleteCheckpointPassesWithOrWithoutPrefix) {
  const Gpt2Config c = small_config();
  for (const std::string prefix : {"", "transformer."}) {
    ScratchDir dir;
    const SafetensorsFile f = SafetensorsFile::open(write_checkpoint(dir, c, prefix));
    EXPECT_NO_THROW(check_gpt2_tensors(f, c)) << "prefix '" << prefix << "'";
    EXPECT_EQ(find_tensor_name(f, "wte.weight"), prefix + "wte.weight");
    EXPECT_EQ(find_tensor_name(f, "h.1.mlp.c_proj.bias"), prefix + "h.1.mlp.c_proj.bias");
  }
}

TEST(Gpt2Tensors, ShapeContradictingConfig) {
  Gpt2Config c = small_config();
  ScratchDir dir;
  const std::string path = write_checkpoint(dir, c, "", "h.0.attn.c_attn.weight", {8, 22});
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_THROW_MSG(check_gpt2_tensors(f, c), ModelFileError,
                   path + ": tensor 'h.0.attn.c_attn.weight' has shape [8, 22], expected [8, 24] from config.json "
                          "(n_embd 8)");
  // A config whose vocabulary contradicts the file names vocab_size.
  c.vocab_size = 11;
  ScratchDir dir2;
  const SafetensorsFile g = SafetensorsFile::open(write_checkpoint(dir2, small_config()));
  EXPECT_THROW_MSG(check_gpt2_tensors(g, c), ModelFileError,
                   "tensor 'wte.weight' has shape [10, 8], expected [11, 8] from config.json (vocab_size 11, n_embd 8)");
  // More layers in config.json than in the file.
  c = small_config();
  c.n_layer = 3;
  EXPECT_THROW_MSG(check_gpt2_tensors(g, c), ModelFileError, "missing tensor 'h.2.ln_1.weight'");
}

TEST(Gpt2Tensors, MissingTensorNamesBothSpellings) {
  const Gpt2Config c = small_config();
  ScratchDir dir;
  const std::string path = write_checkpoint(dir, c, "transformer.", "", {}, "ln_f.bias");
  const SafetensorsFile f = SafetensorsFile::open(path);
  EXPECT_THROW_MSG(check_gpt2_tensors(f, c), ModelFileError,
                   path + ": missing tensor 'ln_f.bias' (also looked for 'transformer.ln_f.bias')");
  EXPECT_THROW_MSG(find_tensor_name(f, "lm_head.weight"), ModelFileError, "missing tensor 'lm_head.weight'");
}

}  // namespace
}  // namespace genrepro
