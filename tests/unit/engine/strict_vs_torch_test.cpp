// The strict forward (genrepro's own float32 kernels, strict/strict_gpt2.hpp) on the tiny fixture
// against libtorch's Gpt2Model and against the Python transcription of Hugging Face's GPT-2
// (tests/reference/gpt2_reference.py): the same model to float32 tolerance, and the same greedy
// tokens. The two sum in other orders, so their bits differ; what must agree is the math.
#include <algorithm>
#include <array>
#include <cmath>
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

#include "engine/gpt2_model.hpp"
#include "engine/torch_runtime.hpp"
#include "model/model_files.hpp"
#include "strict/strict_gpt2.hpp"
#include "strict/thread_team.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

// |strict logit - torch logit| bound. The tiny fixture's logits span about +-20 (a float32 ulp
// there is 1.9e-6), and the two forwards round differently at every sum (strict: fma chains and
// fixed_sum; OpenBLAS: its own blocking; ATen: its own exp, tanh, layer norm). Measured on the
// prompt's 8 positions: strict vs libtorch 2.5e-5; against the same HF math in float64, strict is
// off by 1.5e-5 and the float32 Python reference by 1.2e-5, so neither is the worse float32
// forward. 1e-4 (the bound libtorch's own cached path is held to, gpt2_model_test.cpp) still
// catches each subtle mistake that file lists: exact gelu for gelu_new moves logits by 5.9e-3,
// eps 1e-6 for 1e-5 by 6.6e-4, a missing 1/sqrt(head_dim) by 10, a missing causal mask by 21.
constexpr double kLogitTolerance = 1e-4;

// gpt2_model_test.cpp's prompt: "the river bank was" then " a little. The" (ctest's
// reference.gpt2_python runs the Python reference on exactly these ids).
const std::vector<int64_t> kPromptIds = {1169, 7850, 3331, 373, 257, 1310, 13, 383};
constexpr int kGreedySteps = 30;

ModelFiles tiny_files() { return locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag); }

// Logits [T][V] of every position, fed a token at a time through the strict KV cache.
std::vector<std::vector<float>> strict_positions(const strict::StrictGpt2& model, const std::vector<int64_t>& ids) {
  strict::ThreadTeam team(1);
  strict::StrictCache cache = model.make_cache(static_cast<int64_t>(ids.size()));
  std::vector<std::vector<float>> rows;
  for (int64_t id : ids) {
    rows.emplace_back(static_cast<size_t>(model.logits_size()));
    model.forward({&cache}, {{id}}, rows.back().data(), team);
  }
  return rows;
}

struct Diff {
  double max = 0;
  double scale = 0;  // max |want|
  std::string where;
};

// Max |got - want| over rows [T][V] (want as float64 [T, V]).
Diff compare(const std::vector<std::vector<float>>& got, const torch::Tensor& want) {
  const torch::Tensor w = want.to(torch::kFloat64).contiguous();
  Diff d;
  for (size_t t = 0; t < got.size(); ++t) {
    const double* row = w[static_cast<int64_t>(t)].data_ptr<double>();
    for (size_t j = 0; j < got[t].size(); ++j) {
      const double delta = std::fabs(static_cast<double>(got[t][j]) - row[j]);
      d.scale = std::max(d.scale, std::fabs(row[j]));
      if (delta > d.max) {
        d.max = delta;
        d.where = "position " + std::to_string(t) + ", token " + std::to_string(j) + ": " +
                  std::to_string(got[t][j]) + " vs " + std::to_string(row[j]);
      }
    }
  }
  return d;
}

int64_t argmax(const std::vector<float>& row) {
  return static_cast<int64_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

std::vector<int64_t> strict_greedy(const strict::StrictGpt2& model, std::vector<int64_t> ids, int steps) {
  strict::ThreadTeam team(1);
  strict::StrictCache cache = model.make_cache(static_cast<int64_t>(ids.size()) + steps);
  std::vector<float> logits(static_cast<size_t>(model.logits_size()));
  std::vector<int64_t> out;
  model.forward({&cache}, {ids}, logits.data(), team);
  for (int s = 0; s < steps; ++s) {
    out.push_back(argmax(logits));
    if (s + 1 < steps) model.forward({&cache}, {{out.back()}}, logits.data(), team);
  }
  return out;
}

std::vector<int64_t> torch_greedy(const Gpt2Model& model, std::vector<int64_t> ids, int steps) {
  std::vector<int64_t> out;
  for (int s = 0; s < steps; ++s) {
    const torch::Tensor logits = model.forward(ids);
    out.push_back(logits[logits.size(0) - 1].argmax().item<int64_t>());
    ids.push_back(out.back());
  }
  return out;
}

TEST(StrictVsTorch, LogitsOfEveryPositionWithinTolerance) {
  set_torch_threads(1);
  const Gpt2Model torch_model = Gpt2Model::load(tiny_files());
  const strict::StrictGpt2 model = strict::StrictGpt2::load(tiny_files());
  ASSERT_EQ(model.logits_size(), torch_model.config().vocab_size);
  const Diff d = compare(strict_positions(model, kPromptIds), torch_model.forward(kPromptIds));
  EXPECT_LE(d.max, kLogitTolerance) << "worst at " << d.where;
  EXPECT_GT(d.scale, 1.0) << "logits too flat to compare";
  std::printf("strict (%s) vs libtorch: max |dlogit| %.3g over logits up to %.3g (%s)\n", model.kernel_isa(), d.max,
              d.scale, d.where.c_str());
}

TEST(StrictVsTorch, GreedyTokensAreTorchs) {
  set_torch_threads(1);
  const Gpt2Model torch_model = Gpt2Model::load(tiny_files());
  const strict::StrictGpt2 model = strict::StrictGpt2::load(tiny_files());
  const std::vector<int64_t> got = strict_greedy(model, kPromptIds, kGreedySteps);
  EXPECT_EQ(got, torch_greedy(torch_model, kPromptIds, kGreedySteps));
  EXPECT_GT(std::set<int64_t>(got.begin(), got.end()).size(), 1u);
}

// The Python reference's logits and greedy ids, from the file ctest's reference.gpt2_python wrote
// ($GENREPRO_GPT2_REFERENCE); skipped when run by hand without it (gpt2_model_test.cpp runs Python
// itself in that case, and holds libtorch to the same file).
TEST(StrictVsTorch, MatchesThePythonTranscriptionOfHuggingFace) {
  const char* path = std::getenv("GENREPRO_GPT2_REFERENCE");
  if (path == nullptr || *path == '\0' || !fs::exists(path)) GTEST_SKIP() << "GENREPRO_GPT2_REFERENCE not set";
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  ASSERT_EQ(j.at("ids").get<std::vector<int64_t>>(), kPromptIds) << path << " was made for other ids";
  const auto rows = j.at("logits").get<std::vector<std::vector<double>>>();
  torch::Tensor want = torch::empty({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.at(0).size())},
                                    torch::kFloat64);
  for (size_t r = 0; r < rows.size(); ++r) want[static_cast<int64_t>(r)].copy_(torch::tensor(rows[r], torch::kFloat64));
  const strict::StrictGpt2 model = strict::StrictGpt2::load(tiny_files());
  const Diff d = compare(strict_positions(model, kPromptIds), want);
  EXPECT_LE(d.max, kLogitTolerance) << "worst at " << d.where;
  std::printf("strict vs Python HF transcription: max |dlogit| %.3g\n", d.max);
  EXPECT_EQ(strict_greedy(model, kPromptIds, kGreedySteps), j.at("greedy").get<std::vector<int64_t>>());
}

}  // namespace
}  // namespace genrepro
