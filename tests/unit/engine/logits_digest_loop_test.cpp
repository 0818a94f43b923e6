// The logits digest in the engine: every step's logits_digest is of the model's full raw float32 row, before
// temperature, filters and the frameworks' penalties (so the same row gives the same digest
// whatever the sampler settings), the max_new_tokens 0 first prediction included; and on the tiny
// fixture, the row the model computes. Batched vs alone: batched_decoder_test.cpp and
// framework_sampler_test.cpp compare the digests with every other recorded value.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/generation_loop.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "evidence/environment.hpp"
#include "evidence/logits_digest.hpp"
#include "model/model_files.hpp"
#include "params/framework_params.hpp"
#include "engine/torch_row_math.hpp"

namespace genrepro {
namespace {

constexpr int64_t kDigestVocab = 300;
constexpr int64_t kDigestEos = 299;

// V distinct logits whose order moves with the sequence; each row is kept, in feeding order.
class RowSource : public LogitsSource {
 public:
  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    std::vector<float> row(kDigestVocab);
    const int64_t shift = (ids.back() * 37 + static_cast<int64_t>(ids.size()) * 11) % kDigestVocab;
    for (int64_t i = 0; i < kDigestVocab; ++i) row[i] = -0.03f * static_cast<float>((i * 13 + shift) % kDigestVocab) + 5.0f;
    row[kDigestEos] = -20;
    fed.push_back(row);
    return row;
  }
  int64_t context_size() const override { return 1024; }
  const StepMath& step_math() const override { return torch_step_math(); }
  std::vector<std::vector<float>> fed;
};

std::string digest_text(int64_t id) { return "<" + std::to_string(id) + ">"; }

void expect_digests_of_rows(const RunParams& params, const std::string& what) {
  RowSource source;
  const GenerationResult r = run_generation(source, {3, 4}, params, kDigestEos, digest_text);
  ASSERT_EQ(r.steps.size(), source.fed.size()) << what;
  ASSERT_FALSE(r.steps.empty()) << what;
  for (std::size_t k = 0; k < r.steps.size(); ++k) {
    ASSERT_TRUE(r.steps[k].logits_digest.has_value()) << what << " step " << k;
    EXPECT_EQ(*r.steps[k].logits_digest, logits_digest(source.fed[k].data(), source.fed[k].size())) << what << " step " << k;
  }
}

RunParams digest_params(DecodeMode mode, double temperature, int64_t top_k, int64_t max_new_tokens) {
  RunParams p;
  p.max_new_tokens = max_new_tokens;
  p.sampling.mode = mode;
  p.sampling.temperature = temperature;
  p.sampling.top_k = top_k;
  p.sampling.seed = 7;
  return p;
}

TEST(LogitsDigestLoop, EveryStepDigestsTheRawRowWhateverTheChain) {
  expect_digests_of_rows(digest_params(DecodeMode::greedy, 1, 0, 6), "greedy");
  expect_digests_of_rows(digest_params(DecodeMode::sample, 0.5, 20, 6), "T 0.5 top_k 20");
  expect_digests_of_rows(digest_params(DecodeMode::sample, 1, 0, 0), "max_new_tokens 0");
  RunParams hf = digest_params(DecodeMode::sample, 0.7, 0, 6);
  resolve_framework(hf.sampling, Framework::hf);
  hf.sampling.temperature = 0.7;
  hf.sampling.controls.repetition_penalty = 1.5;
  expect_digests_of_rows(hf, "hf, repetition_penalty 1.5");
  RunParams hf_first = hf;
  hf_first.max_new_tokens = 0;
  expect_digests_of_rows(hf_first, "hf, max_new_tokens 0");
  RunParams llama = digest_params(DecodeMode::sample, 0.8, 0, 6);
  resolve_framework(llama.sampling, Framework::llama_cpp);
  llama.sampling.controls.repeat_penalty = 1.3;
  expect_digests_of_rows(llama, "llama.cpp, repeat_penalty 1.3");
}

const Gpt2Model& digest_tiny() {
  static const Gpt2Model model = Gpt2Model::load(locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag));
  return model;
}

TEST(LogitsDigestLoop, TheFixtureRunsDigestTheModelsRowOnBothPaths) {
  set_blas_threads(1);
  const std::vector<int64_t> prompt = {1169, 7850, 3331, 373};
  RunParams p;
  p.max_new_tokens = 4;
  const TokenText text = [](int64_t id) { return std::to_string(id); };
  const auto recompute = make_recompute_source(digest_tiny());
  const GenerationResult slow = run_generation(*recompute, prompt, p, digest_tiny().config().eos_token_id, text);
  p.use_cache = true;
  const auto cached = make_cached_source(digest_tiny());
  const GenerationResult fast = run_generation(*cached, prompt, p, digest_tiny().config().eos_token_id, text);
  ASSERT_EQ(slow.steps.size(), 4u);
  ASSERT_EQ(fast.steps.size(), 4u);
  // The first prediction: the model's last row of one forward over the prompt, either way.
  const torch::Tensor row = digest_tiny().forward(prompt).select(0, -1).contiguous();
  const std::string expected = logits_digest(row.data_ptr<float>(), static_cast<std::size_t>(row.numel()));
  EXPECT_EQ(slow.steps[0].logits_digest, expected);
  EXPECT_EQ(fast.steps[0].logits_digest, expected);
  for (std::size_t k = 1; k < 4; ++k) {
    std::vector<int64_t> ids = prompt;
    ids.insert(ids.end(), slow.output_ids.begin(), slow.output_ids.begin() + static_cast<std::ptrdiff_t>(k));
    const torch::Tensor r = digest_tiny().forward(ids).select(0, -1).contiguous();
    EXPECT_EQ(slow.steps[k].logits_digest, logits_digest(r.data_ptr<float>(), static_cast<std::size_t>(r.numel()))) << "step " << k;
  }
}

}  // namespace
}  // namespace genrepro
