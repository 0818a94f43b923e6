// GPT-2 forward on the tiny fixture against an independent PyTorch transcription of Hugging
// Face's eager GPT-2 (tests/reference/gpt2_reference.py, run with /usr/bin/python3), the KV-cache
// path against recompute, greedy runs against each other and against the Python greedy loop, and
// the loader's and the forward's errors.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "util/errors.hpp"
#include "model/model_config.hpp"
#include "model/model_files.hpp"
#include "model/safetensors.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "engine/torch_runtime.hpp"
#include "support/torch_rows.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

// The bound on |C++ logit - reference logit|. The C++ forward and the Python reference
// issue the same libtorch 1.13 ops on the same operands, so recompute agrees to the bit (measured
// max 0). The cached path computes the same sums in other gemm shapes (one query row instead of
// T), which moved the fixture's logits (range about +-20) by at most 1.6e-5, ~8 float32 ulps.
// 1e-4 leaves room for BLAS kernels that block differently, and still catches the subtle
// mistakes: with the reference, exact gelu for gelu_new moves logits by 5.9e-3, LayerNorm eps
// 1e-6 for 1e-5 by 6.6e-4, a missing 1/sqrt(head_dim) by 10, a missing causal mask by 21.
constexpr double kLogitTolerance = 1e-4;

// "the river bank was" (the article's prompt, GPT-2 ids from the reference tokenizer) followed
// by " a little. The" so positions beyond the article's four tokens are covered too.
const std::vector<int64_t> kPromptIds = {1169, 7850, 3331, 373, 257, 1310, 13, 383};
constexpr int kGreedySteps = 30;

Gpt2Model load_model(const std::string& dir) {
  set_torch_threads(1);
  return Gpt2Model::load(locate_model_dir(dir, ModelSource::flag));
}

Gpt2Model load_tiny() { return load_model(GENREPRO_TEST_MODEL_DIR); }

std::string join_ids(const std::vector<int64_t>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? "," : "") + std::to_string(ids[i]);
  return s;
}

// Runs a shell command; returns its stdout, failing the test on a non-zero exit.
std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("popen failed: " + cmd);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  const int status = pclose(pipe.release());
  if (status != 0) throw std::runtime_error("command failed (status " + std::to_string(status) + "): " + cmd);
  return out;
}

std::string reference_command(const std::vector<int64_t>& ids) {
  return std::string(GENREPRO_TEST_PYTHON) + " " + GENREPRO_SOURCE_DIR + "/tests/reference/gpt2_reference.py --model " +
         GENREPRO_TEST_MODEL_DIR + " --ids " + join_ids(ids);
}

// A fresh directory under the system temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "genrepro-gpt2-test-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// What the Python reference says for kPromptIds: the logits [T, V] of every position (as float64;
// the JSON holds float32 values exactly) and kGreedySteps greedy ids. Python and torch take seconds
// to start, so one run serves every test: ctest's fixture reference.gpt2_python writes the file
// once for all shards ($GENREPRO_GPT2_REFERENCE); run by hand, the binary runs Python itself, once.
struct PythonReference {
  torch::Tensor logits;
  std::vector<int64_t> greedy;
};

PythonReference read_python_reference(const fs::path& path) {
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  if (j.at("ids").get<std::vector<int64_t>>() != kPromptIds)
    throw std::runtime_error(path.string() + ": the reference was run on other ids than kPromptIds");
  const auto rows = j.at("logits").get<std::vector<std::vector<double>>>();
  torch::Tensor t = torch::empty({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.at(0).size())},
                                 torch::kFloat64);
  for (size_t r = 0; r < rows.size(); ++r) {
    t[static_cast<int64_t>(r)].copy_(torch::tensor(rows[r], torch::kFloat64));
  }
  PythonReference ref{t, j.at("greedy").get<std::vector<int64_t>>()};
  if (ref.greedy.size() != static_cast<size_t>(kGreedySteps))
    throw std::runtime_error(path.string() + ": " + std::to_string(ref.greedy.size()) + " greedy ids, expected " +
                             std::to_string(kGreedySteps));
  return ref;
}

const PythonReference& python_reference() {
  static const PythonReference ref = [] {
    if (const char* made = std::getenv("GENREPRO_GPT2_REFERENCE"); made != nullptr && *made != '\0')
      return read_python_reference(made);
    TempDir tmp;
    const fs::path out = tmp.path() / "reference.json";
    run_command(reference_command(kPromptIds) + " --greedy " + std::to_string(kGreedySteps) + " --logits-out " +
                out.string() + " > /dev/null");
    return read_python_reference(out);
  }();
  return ref;
}

// Fails with the max |difference| and the first index past the tolerance.
::testing::AssertionResult logits_close(const torch::Tensor& got, const torch::Tensor& want, double tol) {
  if (got.sizes() != want.sizes()) {
    return ::testing::AssertionFailure() << "shape " << got.sizes() << " vs " << want.sizes();
  }
  const torch::Tensor diff = (got.to(torch::kFloat64) - want.to(torch::kFloat64)).abs().reshape({-1});
  const double max_diff = diff.max().item<double>();
  if (max_diff <= tol) {
    return ::testing::AssertionSuccess() << "max |dlogit| " << max_diff;
  }
  const int64_t first_bad = (diff > tol).nonzero()[0][0].item<int64_t>();
  const int64_t cols = got.dim() == 2 ? got.size(1) : got.numel();
  return ::testing::AssertionFailure() << "max |dlogit| " << max_diff << " > " << tol << "; first bad at row "
                                       << first_bad / cols << ", token " << first_bad % cols << ": "
                                       << got.reshape({-1})[first_bad].item<double>() << " vs "
                                       << want.reshape({-1})[first_bad].item<double>();
}

double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// The article's greedy loop over a logits source; returns the new ids.
std::vector<int64_t> greedy(LogitsSource& source, std::vector<int64_t> ids, int steps) {
  std::vector<int64_t> out;
  for (int s = 0; s < steps; ++s) {
    const int64_t next = test::tensor_of(source.next_logits(ids)).argmax().item<int64_t>();
    ids.push_back(next);
    out.push_back(next);
  }
  return out;
}

// ---- against the Python transcription of HF's eager GPT-2 ----

TEST(Gpt2ModelReference, RecomputeLogitsMatchPythonTranscription) {
  const Gpt2Model model = load_tiny();
  const torch::Tensor want = python_reference().logits;
  const torch::Tensor got = model.forward(kPromptIds);  // [T, V]
  ASSERT_EQ(got.size(1), model.config().vocab_size);
  const auto close = logits_close(got, want, kLogitTolerance);
  EXPECT_TRUE(close);
  std::printf("recompute vs reference: %s\n", close.message());
}

TEST(Gpt2ModelReference, CachedLogitsMatchPythonTranscription) {
  const Gpt2Model model = load_tiny();
  const torch::Tensor want = python_reference().logits;
  // The article's four tokens as one chunk, then one token at a time.
  KvCache cache;
  std::vector<torch::Tensor> rows;
  rows.push_back(model.forward_cached(cache, {kPromptIds.begin(), kPromptIds.begin() + 4}));
  for (size_t i = 4; i < kPromptIds.size(); ++i) rows.push_back(model.forward_cached(cache, {kPromptIds[i]}));
  EXPECT_EQ(cache.length, static_cast<int64_t>(kPromptIds.size()));
  const auto close = logits_close(torch::cat(rows, 0), want, kLogitTolerance);
  EXPECT_TRUE(close);
  std::printf("KV cache vs reference: %s\n", close.message());
}

// ---- greedy: cached vs recompute vs Python, and repeatability ----

TEST(Gpt2ModelGreedy, CachedMatchesRecomputeAtEveryStep) {
  const Gpt2Model model = load_tiny();
  auto recompute = make_recompute_source(model);
  auto cached = make_cached_source(model);
  std::vector<int64_t> ids = kPromptIds;
  double worst = 0;
  for (int step = 0; step < kGreedySteps; ++step) {
    const torch::Tensor a = test::tensor_of(recompute->next_logits(ids));
    const torch::Tensor b = test::tensor_of(cached->next_logits(ids));
    ASSERT_TRUE(logits_close(b, a, kLogitTolerance)) << "at step " << step;
    worst = std::max(worst, max_abs_diff(a, b));
    const int64_t next_a = a.argmax().item<int64_t>();
    ASSERT_EQ(b.argmax().item<int64_t>(), next_a) << "at step " << step;
    ids.push_back(next_a);
  }
  std::printf("cached vs recompute over %d greedy steps: max |dlogit| %g\n", kGreedySteps, worst);
}

TEST(Gpt2ModelGreedy, SameTokensCachedRecomputePythonAndTwiceInARow) {
  const Gpt2Model model = load_tiny();
  const std::vector<int64_t> py = python_reference().greedy;
  ASSERT_EQ(py.size(), static_cast<size_t>(kGreedySteps));
  // The second run loads the model again, so nothing carried over from the first can hide a difference.
  const Gpt2Model reloaded = load_tiny();
  for (int run = 0; run < 2; ++run) {
    const Gpt2Model& m = run == 0 ? model : reloaded;
    auto recompute = make_recompute_source(m);
    auto cached = make_cached_source(m);
    EXPECT_EQ(greedy(*recompute, kPromptIds, kGreedySteps), py) << "recompute, run " << run;
    EXPECT_EQ(greedy(*cached, kPromptIds, kGreedySteps), py) << "KV cache, run " << run;
  }
  // A greedy run that only ever repeated one token would make the comparisons above weak.
  EXPECT_GT(std::set<int64_t>(py.begin(), py.end()).size(), 1u) << "greedy output: " << join_ids(py);
}

TEST(Gpt2ModelGreedy, CachedSourceRestartsOnASequenceThatIsNotAnExtension) {
  const Gpt2Model model = load_tiny();
  auto cached = make_cached_source(model);
  auto recompute = make_recompute_source(model);
  const std::vector<int64_t> first = kPromptIds;
  const std::vector<int64_t> other = {464, 3797, 318};  // "The cat is": shares no prefix with `first`
  const std::vector<int64_t> shorter(kPromptIds.begin(), kPromptIds.begin() + 3);
  for (const auto& ids : {first, other, shorter, first, first}) {
    EXPECT_TRUE(logits_close(test::tensor_of(cached->next_logits(ids)), test::tensor_of(recompute->next_logits(ids)), kLogitTolerance))
        << "ids " << join_ids(ids);
  }
}

// ---- loading ----

// Copies the fixture's config and tokenizer into `dir` and writes `tensors` as its weights.
void write_model_dir(const fs::path& dir, const std::vector<F32Tensor>& tensors) {
  for (const char* f : {"config.json", "vocab.json", "merges.txt"}) {
    fs::copy_file(fs::path(GENREPRO_TEST_MODEL_DIR) / f, dir / f);
  }
  write_safetensors_f32((dir / "model.safetensors").string(), tensors);
}

std::vector<F32Tensor> fixture_tensors() {
  const SafetensorsFile file = SafetensorsFile::open(std::string(GENREPRO_TEST_MODEL_DIR) + "/model.safetensors");
  std::vector<F32Tensor> out;
  for (const auto& [name, info] : file.tensors()) out.push_back({name, info.shape, file.to_f32(info)});
  return out;
}

TEST(Gpt2ModelLoad, TransformerPrefixGivesTheSameLogits) {
  TempDir tmp;
  std::vector<F32Tensor> tensors = fixture_tensors();
  for (auto& t : tensors) t.name = "transformer." + t.name;
  write_model_dir(tmp.path(), tensors);
  const Gpt2Model prefixed = load_model(tmp.path().string());
  const Gpt2Model plain = load_tiny();
  EXPECT_TRUE(torch::equal(prefixed.forward(kPromptIds), plain.forward(kPromptIds)));
}

// Writes `tensors` as an F16 safetensors file by hand (write_safetensors_f32 writes only F32):
// 8-byte little-endian header length, the JSON header padded with spaces to 8 bytes, the data.
void write_safetensors_f16(const fs::path& path, const std::vector<F32Tensor>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const auto& t : tensors) {
    const torch::Tensor half = torch::tensor(t.values, torch::kFloat32).to(torch::kHalf).contiguous();
    const size_t begin = data.size();
    data.append(static_cast<const char*>(half.data_ptr()), static_cast<size_t>(half.numel()) * 2);
    header[t.name] = {{"dtype", "F16"}, {"shape", t.shape}, {"data_offsets", {begin, data.size()}}};
  }
  std::string h = header.dump();
  h.append((8 - h.size() % 8) % 8, ' ');
  const uint64_t n = h.size();
  std::ofstream out(path, std::ios::binary);
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << h << data;
}

TEST(Gpt2ModelLoad, F16WeightsAreUpcastExactly) {
  // The fixture's weights rounded to float16 and stored as F16, against the same rounded values
  // stored as F32: float16 -> float32 is exact, so the logits must be identical to the bit.
  std::vector<F32Tensor> rounded = fixture_tensors();
  for (auto& t : rounded) {
    const torch::Tensor r = torch::tensor(t.values, torch::kFloat32).to(torch::kHalf).to(torch::kFloat32).contiguous();
    t.values.assign(r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
  }
  TempDir f16;
  TempDir f32;
  write_model_dir(f32.path(), rounded);
  for (const char* f : {"config.json", "vocab.json", "merges.txt"}) {
    fs::copy_file(fs::path(GENREPRO_TEST_MODEL_DIR) / f, f16.path() / f);
  }
  write_safetensors_f16(f16.path() / "model.safetensors", rounded);
  EXPECT_TRUE(torch::equal(load_model(f16.path().string()).forward(kPromptIds),
                           load_model(f32.path().string()).forward(kPromptIds)));
}

TEST(Gpt2ModelLoad, ShapeContradictingConfigNamesFileTensorAndShapes) {
  TempDir tmp;
  std::vector<F32Tensor> tensors = fixture_tensors();
  const Gpt2Config cfg = read_gpt2_config(std::string(GENREPRO_TEST_MODEL_DIR) + "/config.json");
  auto it = std::find_if(tensors.begin(), tensors.end(), [](const F32Tensor& t) { return t.name == "h.0.mlp.c_fc.weight"; });
  ASSERT_NE(it, tensors.end());
  // [C, F] stored as [F, C] (an nn.Linear-style export): same size, transposed shape.
  it->shape = {cfg.mlp_width(), cfg.n_embd};
  write_model_dir(tmp.path(), tensors);
  try {
    load_model(tmp.path().string());
    FAIL() << "expected ModelFileError";
  } catch (const ModelFileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find("h.0.mlp.c_fc.weight"), std::string::npos) << msg;
    const std::string shapes = "has shape " + shape_text({cfg.mlp_width(), cfg.n_embd}) + ", expected " +
                               shape_text({cfg.n_embd, cfg.mlp_width()});
    EXPECT_NE(msg.find(shapes), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

TEST(Gpt2ModelLoad, MissingTensorNamesFileAndTensor) {
  TempDir tmp;
  std::vector<F32Tensor> tensors = fixture_tensors();
  tensors.erase(std::remove_if(tensors.begin(), tensors.end(), [](const F32Tensor& t) { return t.name == "ln_f.bias"; }),
                tensors.end());
  write_model_dir(tmp.path(), tensors);
  try {
    load_model(tmp.path().string());
    FAIL() << "expected ModelFileError";
  } catch (const ModelFileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ln_f.bias"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

// ---- forward errors ----

template <typename F>
std::string usage_error_message(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "<no UsageError thrown>";
}

TEST(Gpt2ModelForward, IdOutsideTheVocabularyIsAnError) {
  const Gpt2Model model = load_tiny();
  const int64_t V = model.config().vocab_size;
  const std::string expected = "token id " + std::to_string(V) + " at position 2 is outside the vocabulary";
  EXPECT_NE(usage_error_message([&] { model.forward({1169, 7850, V}); }).find(expected), std::string::npos);
  EXPECT_NE(usage_error_message([&] { model.forward({-1}); }).find("token id -1 at position 0"), std::string::npos);

  KvCache cache;
  model.forward_cached(cache, {1169, 7850});
  const std::string msg = usage_error_message([&] { model.forward_cached(cache, {V}); });
  EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  EXPECT_NE(msg.find("vocab_size " + std::to_string(V)), std::string::npos) << msg;
  // The failed call left the cache as it was: the next token still matches recompute.
  EXPECT_EQ(cache.length, 2);
  EXPECT_TRUE(logits_close(model.forward_cached(cache, {3331}), model.forward({1169, 7850, 3331})[2].unsqueeze(0),
                           kLogitTolerance));
}

TEST(Gpt2ModelForward, SequencePastTheContextIsAnError) {
  const Gpt2Model model = load_tiny();
  const int64_t n_ctx = model.config().n_positions;
  const std::string expected = "a sequence of " + std::to_string(n_ctx + 1) + " tokens exceeds the context";
  const std::vector<int64_t> too_long(static_cast<size_t>(n_ctx + 1), 1169);
  const std::string msg = usage_error_message([&] { model.forward(too_long); });
  EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  EXPECT_NE(msg.find("n_positions " + std::to_string(n_ctx)), std::string::npos) << msg;

  // The cached path fills the context exactly, then refuses one more token.
  KvCache cache;
  model.forward_cached(cache, std::vector<int64_t>(static_cast<size_t>(n_ctx - 1), 1169));
  model.forward_cached(cache, {1169});
  EXPECT_EQ(cache.length, n_ctx);
  EXPECT_NE(usage_error_message([&] { model.forward_cached(cache, {1169}); }).find(expected), std::string::npos);

  auto source = make_cached_source(model);
  EXPECT_NE(usage_error_message([&] { source->next_logits(too_long); }).find(expected), std::string::npos);
}

TEST(Gpt2ModelForward, EmptySequenceIsAnError) {
  const Gpt2Model model = load_tiny();
  EXPECT_NE(usage_error_message([&] { model.forward({}); }).find("no token ids"), std::string::npos);
}

}  // namespace
}  // namespace genrepro
