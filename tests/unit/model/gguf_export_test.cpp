// genrepro export --gguf: the same model gives the same bytes, the header says what llama.cpp
// reads (checked field by field here; tests/reference/llama_engine.py reads every tensor back
// independently and has llama.cpp load it), and a bad input or output fails in one line with
// nothing half-written.
#include "model/gguf_export.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/fixture_model.hpp"
#include "model/model_files.hpp"
#include "model/safetensors.hpp"
#include "util/errors.hpp"
#include "util/sha256.hpp"
#include "unit/model/model_test_util.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

struct Tiny {
  ScratchDir dir{"gguf"};
  ModelFiles files;
  Tiny() {
    write_fixture_model((dir.path() / "model").string(), FixturePreset::tiny, GENREPRO_TEST_TOKENIZER_DIR);
    files = locate_model_dir((dir.path() / "model").string(), ModelSource::flag);
  }
};

// A GGUF header read back: the counts and the first keys, enough to check what the writer put
// where (the whole file is read independently by the Python reference).
struct Header {
  uint32_t magic = 0, version = 0;
  uint64_t tensors = 0, kvs = 0;
  std::string first_key, first_value;
};

Header read_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Header h;
  in.read(reinterpret_cast<char*>(&h.magic), 4).read(reinterpret_cast<char*>(&h.version), 4);
  in.read(reinterpret_cast<char*>(&h.tensors), 8).read(reinterpret_cast<char*>(&h.kvs), 8);
  const auto str = [&] {
    uint64_t n = 0;
    in.read(reinterpret_cast<char*>(&n), 8);
    std::string s(n, '\0');
    in.read(s.data(), static_cast<std::streamsize>(n));
    return s;
  };
  h.first_key = str();
  uint32_t type = 0;
  in.read(reinterpret_cast<char*>(&type), 4);
  h.first_value = str();
  return h;
}

TEST(GgufExport, SameModelSameBytesAndTheHeaderLlamaCppReads) {
  Tiny t;
  const std::string a = (t.dir.path() / "a.gguf").string(), b = (t.dir.path() / "sub" / "b.gguf").string();
  const GgufExport ea = export_gguf(t.files, a);
  const GgufExport eb = export_gguf(t.files, b);
  EXPECT_EQ(ea.sha256, eb.sha256);
  EXPECT_EQ(ea.sha256, sha256_file(a).sha256);
  EXPECT_EQ(ea.bytes, fs::file_size(a));
  EXPECT_EQ(ea.tensors, 4 + 12 * 2) << "embeddings, positions, final norm, and 12 per block of the tiny preset's 2";
  EXPECT_EQ(ea.sources.at("model.safetensors"), sha256_file(t.files.weights).sha256);
  const Header h = read_header(a);
  EXPECT_EQ(h.magic, 0x46554747u);
  EXPECT_EQ(h.version, 3u);
  EXPECT_EQ(h.tensors, static_cast<uint64_t>(ea.tensors));
  EXPECT_EQ(h.first_key, "general.architecture");
  EXPECT_EQ(h.first_value, "gpt2");
  EXPECT_EQ(ea.bytes % 32, 0u) << "every tensor is padded to the alignment";
}

TEST(GgufExport, AVocabularyOfAnotherSizeIsRefusedNamingBothFiles) {
  Tiny t;
  nlohmann::json vocab = nlohmann::json::parse(std::ifstream(t.files.vocab));
  vocab.erase("Ġthe");
  std::ofstream(t.files.vocab, std::ios::trunc) << vocab.dump();
  const std::string out = (t.dir.path() / "x.gguf").string();
  EXPECT_THROW_MSG(export_gguf(t.files, out), ModelFileError, "50256 tokens, but config.json says vocab_size 50257");
  EXPECT_FALSE(fs::exists(out));
  for (const auto& entry : fs::directory_iterator(t.dir.path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << "left behind: " << entry.path();
}

TEST(GgufExport, AnOutputThatCannotBeWrittenLeavesTheOldFile) {
  Tiny t;
  const std::string out = (t.dir.path() / "keep.gguf").string();
  std::ofstream(out) << "old";
  std::ofstream(t.dir.path() / "a-file") << "x";
  EXPECT_THROW_MSG(export_gguf(t.files, (t.dir.path() / "a-file" / "y.gguf").string()), ModelFileError, "a-file");
  std::ifstream in(out);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "old");
}

}  // namespace
}  // namespace genrepro
