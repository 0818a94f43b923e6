// The frameworks' chains on hand-checked cases (docs/sampling.md's worked examples), and
// on the tiny fixture: history-dependent stages in the batched decoder (each run its own history)
// and the step records a framework run writes.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/batched_decoder.hpp"
#include "support/torch_chains/framework_sampler.hpp"
#include "engine/run_chain.hpp"
#include "engine/generation_loop.hpp"
#include "engine/gpt2_model.hpp"
#include "sampling/llama_cpp_chain.hpp"
#include "engine/logits_source.hpp"
#include "engine/numerics_probe.hpp"
#include "evidence/environment.hpp"
#include "model/model_files.hpp"
#include "params/framework_params.hpp"
#include "util/errors.hpp"
#include "support/torch_rows.hpp"

namespace genrepro {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

SamplingParams framework_params(Framework f, double temperature, int64_t top_k, double top_p, double min_p, uint64_t seed = 1) {
  SamplingParams s;
  s.mode = DecodeMode::sample;
  resolve_framework(s, f);
  s.temperature = temperature;
  s.top_k = top_k;
  s.top_p = top_p;
  s.controls.min_p = min_p;
  s.seed = seed;
  return s;
}

std::vector<std::pair<std::string, int64_t>> kept_of(const RunStep& step) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const StageKept& k : step.stages) out.emplace_back(k.stage, k.kept);
  return out;
}

int64_t positive_count(const torch::Tensor& p) { return (p > 0).sum().item<int64_t>(); }

// docs/sampling.md, "Same values, different candidate sets": logits [3, 2, 2, 1, 0], T 0.5,
// top_k 2, top_p 0.9, min_p 0.2.
TEST(FrameworkWorkedExample, TheSameValuesKeepOneTokenInHuggingFaceAndTwoInLlamaCpp) {
  const torch::Tensor logits = torch::tensor({3.0f, 2.0f, 2.0f, 1.0f, 0.0f});
  const std::vector<int64_t> ids = {4};
  // Hugging Face: T first ([6, 4, 4, 2, 0]); top-k keeps both 4s (ties with the k-th): 3;
  // top-p 0.9 keeps them (the two 0.1065s are above 1 - 0.9 cumulated); min-p on probabilities
  // after temperature: 0.2 * 0.787 = 0.157 > 0.1065: 1 token.
  const RunStep a = test::torch_run_chain(framework_params(Framework::hf, 0.5, 2, 0.9, 0.2), ids, -1).step(test::row_of(logits), 0, true);
  EXPECT_EQ(kept_of(a), (std::vector<std::pair<std::string, int64_t>>{{"temperature", 5}, {"top_k", 3}, {"top_p", 3}, {"min_p", 1}}));
  EXPECT_EQ(positive_count(test::tensor_of(a.final_probs)), 1);
  EXPECT_EQ(*a.token, 0);
  // llama.cpp: top-k keeps exactly 2 ([3, 2]); top-p on those: 0.731 < 0.9, so both; min-p in
  // logit space: 2 >= 3 + ln 0.2 = 1.39, both; then T: 2 tokens, 0.881 / 0.119.
  const RunStep b = test::torch_run_chain(framework_params(Framework::llama_cpp, 0.5, 2, 0.9, 0.2), ids, -1).step(test::row_of(logits), 0, true);
  EXPECT_EQ(kept_of(b), (std::vector<std::pair<std::string, int64_t>>{{"top_k", 2}, {"top_p", 2}, {"min_p", 2}, {"temperature", 2}}));
  EXPECT_EQ(positive_count(test::tensor_of(b.final_probs)), 2);
  EXPECT_NEAR(b.final_probs[0], 0.8808, 1e-4);
}

TEST(FrameworkWorkedExample, RepetitionPenaltiesByTheirOwnRules) {
  // History: token 0 twice, token 1 once; logits [2, -1, 0.5, 0].
  const std::vector<int64_t> ids = {0, 1, 0};
  const torch::Tensor scores = torch::tensor({2.0f, -1.0f, 0.5f, 0.0f}).reshape({1, -1});
  // Hugging Face: once per distinct token: 2 / 1.3, -1 * 1.3.
  const torch::Tensor hf = hf::repetition_penalty(scores, ids, 1.3);
  EXPECT_FLOAT_EQ(hf[0][0].item<float>(), 2.0f / 1.3f);
  EXPECT_FLOAT_EQ(hf[0][1].item<float>(), -1.3f);
  EXPECT_FLOAT_EQ(hf[0][2].item<float>(), 0.5f);
  // llama.cpp: the same division/multiplication, then count * freq + present subtracted.
  const float logits[] = {2.0f, -1.0f, 0.5f, 0.0f};
  llama_cpp::Candidates cur(logits, 4);
  llama_cpp::penalties(cur, llama_cpp::penalty_window(ids, 64), 1.3f, 0.5f, 0.2f);
  EXPECT_FLOAT_EQ(cur.data[0].logit, 2.0f / 1.3f - (2 * 0.5f + 0.2f));
  EXPECT_FLOAT_EQ(cur.data[1].logit, -1.0f * 1.3f - (0.5f + 0.2f));
  // A window of the last 2 tokens sees token 0 once.
  llama_cpp::Candidates windowed(logits, 4);
  llama_cpp::penalties(windowed, llama_cpp::penalty_window(ids, 2), 1.3f, 0.5f, 0.2f);
  EXPECT_FLOAT_EQ(windowed.data[0].logit, 2.0f / 1.3f - (0.5f + 0.2f));
}

TEST(FrameworkWorkedExample, LlamaCppTemperatureZeroKeepsTheFirstMaximumAndStillDraws) {
  // Two equal maxima: the first in the array's order stays; dist still consumes its draw.
  const float logits[] = {1.0f, 3.0f, 3.0f, 0.0f};
  llama_cpp::Candidates cur(logits, 4);
  llama_cpp::temp_ext(cur, 0.0f, 0.0f, 1.0f);
  EXPECT_EQ(cur.finite_count(), 1);
  EXPECT_EQ(cur.data[1].logit, 3.0f);
  EXPECT_EQ(cur.data[2].logit, -kInf);
  llama_cpp::Dist drawn(42), fresh(42);
  drawn.apply(cur);
  EXPECT_EQ(cur.data[cur.selected].id, 1);
  llama_cpp::Candidates one(logits, 1);
  fresh.apply(one);  // one candidate: p 1, and the draw is consumed all the same
  EXPECT_EQ(one.data[0].p, 1.0f);
}

TEST(FrameworkWorkedExample, TopKTiesHuggingFaceKeepsThemLlamaCppKeepsExactlyK) {
  const torch::Tensor scores = torch::tensor({1.0f, 2.0f, 2.0f, 2.0f, 0.0f}).reshape({1, -1});
  EXPECT_EQ((hf::top_k(scores, 2) > -kInf).sum().item<int64_t>(), 4 - 1);  // the three 2s
  const float logits[] = {1.0f, 2.0f, 2.0f, 2.0f, 0.0f};
  llama_cpp::Candidates cur(logits, 5);
  llama_cpp::top_k(cur, 2);
  EXPECT_EQ(cur.size, 2u);
}

TEST(RunChain, AllMaskedIsANumericsErrorNamingTheStage) {
  SamplingParams s = framework_params(Framework::hf, 1.0, 0, 1.0, 0.0);
  s.controls.suppress_tokens = {0, 1, 2};
  const std::vector<int64_t> ids = {0};
  try {
    test::torch_run_chain(s, ids, -1).step(test::row_of(torch::tensor({1.0f, 2.0f, 3.0f})), 0, true);
    FAIL() << "no error";
  } catch (const NumericsError& e) {
    EXPECT_NE(std::string(e.what()).find("step 0: no token is left to pick after the suppress_tokens stage"), std::string::npos) << e.what();
  }
}

const Gpt2Model& tiny() {
  static const Gpt2Model model = Gpt2Model::load(locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag));
  return model;
}

RunParams framework_run(Framework f, uint64_t seed, int64_t max_new_tokens) {
  RunParams p;
  p.max_new_tokens = max_new_tokens;
  p.use_cache = true;
  p.sampling.mode = DecodeMode::sample;
  resolve_framework(p.sampling, f);
  p.sampling.seed = seed;
  if (f == Framework::hf) {
    p.sampling.controls.repetition_penalty = 1.4;
    p.sampling.controls.no_repeat_ngram_size = 2;
  } else {
    p.sampling.controls.repeat_penalty = 1.4;
    p.sampling.controls.frequency_penalty = 0.3;
    p.sampling.controls.repeat_last_n = 8;
  }
  return p;
}

TEST(FrameworkSampler, HistoryDependentStagesInBatchesRecordWhatEachRunRecordsAlone) {
  // Six runs of different frameworks, seeds, prompts and lengths, so runs with different
  // histories share batches and leave them mid-way: each keeps its own history.
  const std::vector<std::vector<int64_t>> prompts = {{1169, 7850, 3331, 373}, {31373}, {464, 2068, 7586}};
  std::vector<RunParams> params;
  std::vector<std::vector<int64_t>> job_prompts;
  for (int i = 0; i < 6; ++i) {
    params.push_back(framework_run(i % 2 ? Framework::llama_cpp : Framework::hf, 10 + static_cast<uint64_t>(i), 4 + i * 3));
    job_prompts.push_back(prompts[static_cast<size_t>(i) % 3]);
  }
  std::vector<DecodeJob> jobs;
  for (size_t i = 0; i < params.size(); ++i) jobs.push_back(DecodeJob{&job_prompts[i], &params[i]});
  const NumericsProbeResult probe = probe_numerics(tiny(), NumericsProbeLimits{1, 8, 1});
  set_blas_threads(1);
  const TokenText text = [](int64_t id) { return std::to_string(id); };
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto source = make_cached_source(tiny());
    const GenerationResult alone = run_generation(*source, job_prompts[i], params[i], tiny().config().eos_token_id, text);
    ASSERT_FALSE(alone.steps.empty());
    ASSERT_FALSE(alone.steps[0].stages.empty()) << "a framework step lists its stages";
    BatchSettings settings;
    settings.batch = probe.at(1).max_rows;
    std::vector<GenerationResult> batched(jobs.size());
    size_t next = 0;
    decode_batched(
        tiny(), jobs, settings, [&]() -> std::optional<size_t> { return next < jobs.size() ? std::optional<size_t>(next++) : std::nullopt; },
        text, [&](size_t k, GenerationResult r) { batched[k] = std::move(r); });
    const GenerationResult& b = batched[i];
    ASSERT_EQ(b.output_ids, alone.output_ids) << "run " << i;
    ASSERT_EQ(b.steps.size(), alone.steps.size());
    for (size_t s = 0; s < b.steps.size(); ++s) {
      EXPECT_EQ(std::memcmp(&b.steps[s].prob, &alone.steps[s].prob, sizeof(double)), 0) << "run " << i << " step " << s;
      EXPECT_EQ(b.steps[s].kept, alone.steps[s].kept);
      ASSERT_TRUE(alone.steps[s].logits_digest.has_value());  // the batch's row is the lone run's
      EXPECT_EQ(b.steps[s].logits_digest, alone.steps[s].logits_digest) << "run " << i << " step " << s;
      ASSERT_EQ(b.steps[s].stages.size(), alone.steps[s].stages.size());
      for (size_t k = 0; k < b.steps[s].stages.size(); ++k) EXPECT_EQ(b.steps[s].stages[k].kept, alone.steps[s].stages[k].kept);
    }
  }
}

TEST(FrameworkSampler, GreedyHuggingFaceWithAPenaltyLeavesTheRawArgmax) {
  // The article's greedy loop repeats itself; with repetition_penalty the argmax moves.
  RunParams plain, penalised;
  plain.max_new_tokens = penalised.max_new_tokens = 30;
  resolve_framework(plain.sampling, Framework::hf);
  resolve_framework(penalised.sampling, Framework::hf);
  penalised.sampling.controls.repetition_penalty = 2.0;
  const std::vector<int64_t> prompt = {1169, 7850, 3331, 373};
  const TokenText text = [](int64_t id) { return std::to_string(id); };
  const auto s1 = make_recompute_source(tiny());
  const GenerationResult a = run_generation(*s1, prompt, plain, tiny().config().eos_token_id, text);
  const auto s2 = make_recompute_source(tiny());
  const GenerationResult b = run_generation(*s2, prompt, penalised, tiny().config().eos_token_id, text);
  EXPECT_NE(a.output_ids, b.output_ids);
  // Without a processor HF's greedy is the article's: same tokens as mode greedy, framework article.
  RunParams article;
  article.max_new_tokens = 30;
  const auto s3 = make_recompute_source(tiny());
  EXPECT_EQ(run_generation(*s3, prompt, article, tiny().config().eos_token_id, text).output_ids, a.output_ids);
  EXPECT_TRUE(a.steps[0].stages.empty());
  ASSERT_EQ(b.steps[0].stages.size(), 1u);
  EXPECT_EQ(b.steps[0].stages[0].stage, "repetition_penalty");
  EXPECT_EQ(b.steps[0].kept, 1);
}

}  // namespace
}  // namespace genrepro
