// The chain every run steps (engine/run_chain.hpp: the presets of sampling/ with libtorch's row
// math) against the engine's former torch chains, kept as references in tests/support/torch_chains
// (the article's SamplerChain and pickers, Hugging Face's and llama.cpp's FrameworkSamplers): runs
// of many steps on random rows, each step's token accepted as generation does, must give the same
// distribution (every bit), the same token, the same draw record and the same stage counts. That is
// what "the evidence bytes do not change" rests on; the golden gate and the evidence comparison in
// docs/sampling.md show it on whole runs. Then the refusals, worded with the step.
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/run_chain.hpp"
#include "engine/torch_runtime.hpp"
#include "params/framework_params.hpp"
#include "params/sampling_params.hpp"
#include "support/torch_chains/framework_sampler.hpp"
#include "support/torch_chains/samplers.hpp"
#include "support/torch_chains/token_picker.hpp"
#include "util/errors.hpp"
#include "support/torch_rows.hpp"

namespace genrepro {
namespace {

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor ac = a.reshape({-1}).contiguous(), bc = b.reshape({-1}).contiguous();
  return ac.numel() == bc.numel() &&
         std::memcmp(ac.data_ptr<float>(), bc.data_ptr<float>(), static_cast<size_t>(ac.numel()) * sizeof(float)) == 0;
}

// What the former engine recorded at one step.
struct ReferenceStep {
  torch::Tensor final_probs;
  bool argmax = false;
  int64_t token = -1;
  std::vector<StageKept> stages;
  std::optional<DrawRecord> draw;
};

// The former engine, as GenerationRun::advance and advance_framework called it.
class ReferenceEngine {
 public:
  explicit ReferenceEngine(const SamplingParams& s) : s_(s) {
    if (s.framework == Framework::article) {
      chain_ = std::make_unique<SamplerChain>(build_sampler_chain(s));
      picker_ = make_token_picker(s);
    } else {
      framework_ = make_framework_sampler(s);
    }
  }
  ReferenceStep step(const torch::Tensor& logits, const std::vector<int64_t>& ids, int64_t prompt_length, int64_t eos, bool pick) {
    ReferenceStep out;
    const bool greedy = s_.mode == DecodeMode::greedy || s_.temperature == 0;
    if (chain_) {
      out.final_probs = greedy ? torch::softmax(logits, 0) : torch::softmax(chain_->apply(logits), 0);
      out.argmax = greedy;
      if (pick) {
        const RacePick drawn = greedy ? RacePick{pick_greedy(logits), std::nullopt} : picker_->pick_with_margin(out.final_probs);
        out.token = drawn.token;
        out.draw = race_draw_record(drawn);
      }
      return out;
    }
    FrameworkStep f = framework_->step(logits, ChainHistory{ids, prompt_length, eos}, pick);
    out.final_probs = f.final_probs;
    out.argmax = greedy && s_.framework == Framework::hf;
    out.token = f.token ? *f.token : -1;
    out.stages = f.stages;
    out.draw = f.draw;
    return out;
  }

 private:
  SamplingParams s_;
  std::unique_ptr<SamplerChain> chain_;
  std::unique_ptr<TokenPicker> picker_;
  std::unique_ptr<FrameworkSampler> framework_;
};

// Rows like a model's: a normal bulk, a few strong candidates, every fifth row on a coarse grid
// (ties at the filters' boundaries).
torch::Tensor row(std::mt19937& rng, int64_t vocab, int k) {
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(vocab));
  for (float& x : v) x = k % 5 == 4 ? std::round(normal(rng)) : normal(rng);
  for (int j = 0; j < 4; ++j) v[static_cast<size_t>(rng() % static_cast<uint32_t>(vocab))] += 6.0f;
  return torch::from_blob(v.data(), {vocab}, torch::kFloat32).clone();
}

struct Tally {
  int64_t steps = 0, differ = 0;
};

// One run of `steps` steps of both, from the prompt {0, 1, 2}, each picked token accepted; runs of
// an even seed end with a step that picks nothing (a first prediction's record).
void compare_run(const SamplingParams& s, int64_t vocab, int steps, uint32_t seed, Tally& t) {
  SCOPED_TRACE(to_string(s.framework) + std::string(" seed ") + std::to_string(s.seed) + " vocab " + std::to_string(vocab));
  std::mt19937 rng(seed);
  std::vector<int64_t> ids = {0, 1, 2};
  const int64_t eos = vocab - 1;
  ReferenceEngine reference(s);
  RunChain chain = test::torch_run_chain(s, ids, eos);
  for (int k = 0; k < steps; ++k) {
    const torch::Tensor logits = row(rng, vocab, k);
    const bool pick = k + 1 < steps || seed % 2 == 1;
    const ReferenceStep a = reference.step(logits, ids, 3, eos, pick);
    const RunStep b = chain.step(test::row_of(logits), k, pick);
    ++t.steps;
    bool same = same_bits(a.final_probs, test::tensor_of(b.final_probs)) && a.argmax == b.argmax && a.token == (b.token ? *b.token : -1) &&
                a.stages.size() == b.stages.size() && a.draw.has_value() == b.draw.has_value();
    for (size_t i = 0; same && i < a.stages.size(); ++i)
      same = a.stages[i].stage == b.stages[i].stage && a.stages[i].kept == b.stages[i].kept;
    if (same && a.draw)
      same = a.draw->rule == b.draw->rule && a.draw->runner_up == b.draw->runner_up &&
             std::memcmp(&a.draw->margin, &b.draw->margin, sizeof(double)) == 0;
    if (!same) {
      ++t.differ;
      ADD_FAILURE() << "step " << k << ": token " << a.token << " vs " << (b.token ? *b.token : -1);
      return;
    }
    if (!pick) return;
    ids.push_back(a.token);
    chain.accept(a.token);
  }
}

class RunChainVsFormerEngine : public ::testing::Test {
 protected:
  // One intra-op thread, as runs execute (engine/run_environment.cpp).
  void SetUp() override {
    threads_ = at::get_num_threads();
    set_torch_threads(1);
  }
  void TearDown() override { set_torch_threads(threads_); }

 private:
  int threads_ = 1;
};

SamplingParams preset(Framework f, DecodeMode mode, uint64_t seed, const std::function<void(SamplingParams&)>& set = {}) {
  SamplingParams s;
  s.mode = mode;
  resolve_framework(s, f);
  s.seed = seed;
  if (set) set(s);
  EXPECT_TRUE(check_run_params(RunParams{s, 50, true, false, 5}).empty()) << to_string(f);
  return s;
}

TEST_F(RunChainVsFormerEngine, EveryPresetStepForStepOnRandomRuns) {
  std::vector<SamplingParams> configs;
  // the article: greedy, both rules, another order, both rngs
  configs.push_back(preset(Framework::article, DecodeMode::greedy, 1));
  configs.push_back(preset(Framework::article, DecodeMode::sample, 2, [](SamplingParams& s) { s.temperature = 0.7, s.top_p = 0.9; }));
  configs.push_back(preset(Framework::article, DecodeMode::sample, 3, [](SamplingParams& s) {
    s.temperature = 1.3, s.top_k = 40, s.top_p = 0.95, s.rng = Rng::portable;
  }));
  configs.push_back(preset(Framework::article, DecodeMode::sample, 4, [](SamplingParams& s) {
    s.top_k = 5, s.top_p = 0.8, s.top_p_rule = TopPRule::hf;
    s.sampler_order = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
  }));
  // Hugging Face: greedy with processors, sampling with every warper
  configs.push_back(preset(Framework::hf, DecodeMode::greedy, 5, [](SamplingParams& s) {
    s.controls.repetition_penalty = 1.3, s.controls.no_repeat_ngram_size = 2;
  }));
  configs.push_back(preset(Framework::hf, DecodeMode::sample, 6, [](SamplingParams& s) { s.temperature = 0.7, s.top_p = 0.9; }));
  configs.push_back(preset(Framework::hf, DecodeMode::sample, 7, [](SamplingParams& s) {
    s.controls.min_p = 0.05, s.controls.typical_p = 0.9, s.controls.repetition_penalty = 1.2, s.top_k = 0;
  }));
  configs.push_back(preset(Framework::hf, DecodeMode::sample, 8, [](SamplingParams& s) {
    s.controls.epsilon_cutoff = 3e-4, s.controls.eta_cutoff = 1e-3, s.controls.min_new_tokens = 4;
    s.controls.sequence_bias = {{{3}, 1.5}, {{1, 2}, -2.0}};
    s.controls.suppress_tokens = {5};
  }));
  // llama.cpp: its defaults, penalties over a window, temperature 0
  configs.push_back(preset(Framework::llama_cpp, DecodeMode::sample, 9));
  configs.push_back(preset(Framework::llama_cpp, DecodeMode::sample, 10, [](SamplingParams& s) {
    s.controls.repeat_penalty = 1.1, s.controls.repeat_last_n = 8, s.controls.frequency_penalty = 0.2, s.controls.typical_p = 0.9;
  }));
  configs.push_back(preset(Framework::llama_cpp, DecodeMode::sample, 11, [](SamplingParams& s) { s.temperature = 0; }));
  Tally t;
  uint32_t seed = 100;
  for (const SamplingParams& s : configs)
    for (int64_t vocab : {50, 2048, 50257}) compare_run(s, vocab, vocab == 50257 ? 6 : 24, seed++, t);
  EXPECT_EQ(t.differ, 0) << "of " << t.steps << " steps";
  std::cout << "[run chain vs former engine] " << configs.size() << " configurations, " << t.steps << " steps: " << t.differ
            << " with another distribution, token, draw or stage count\n";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RunChain, ADistributionThatIsNotOneIsRefusedNamingTheStep) {
  // Finite logits whose scaled values leave float32 (3e38 / 0.5): the softmax is NaN.
  SamplingParams s = preset(Framework::article, DecodeMode::sample, 1, [](SamplingParams& p) { p.temperature = 0.5; });
  RunChain chain = test::torch_run_chain(s, {0}, -1);
  EXPECT_EQ(*chain.step(test::row_of(torch::tensor({0.0f, 1.0f, 0.0f})), 0, true).token, 1);
  const std::string e = error_of([&] { chain.step(test::row_of(torch::tensor({3e38f, -3e38f, 0.0f})), 1, true); });
  EXPECT_EQ(e.rfind("step 1: the distribution to draw from holds NaN or infinity; the logits or the sampling parameters left "
                    "float32's range (a temperature near its minimum, or broken weights); check the temperature and the model's weights",
                    0),
            0u)
      << e;
}

TEST(RunChain, TheSmallestTemperatureGivesAOneHotDistributionAndDrawsTheArgmax) {
  SamplingParams s = preset(Framework::article, DecodeMode::sample, 1, [](SamplingParams& p) { p.temperature = kMinTemperature; });
  const RunStep step = test::torch_run_chain(s, {0}, -1).step(test::row_of(torch::tensor({1.0f, 3.0f, 2.5f, -7.0f})), 0, true);
  EXPECT_TRUE(test::tensor_of(step.final_probs).isfinite().all().item<bool>());
  EXPECT_EQ(*step.token, 1);
  EXPECT_EQ(step.final_probs[1], 1.0f);
}

TEST(RunChain, AControlIdOutsideTheVocabularyNamesTheFlag) {
  SamplingParams s = preset(Framework::hf, DecodeMode::sample, 1, [](SamplingParams& p) { p.controls.suppress_tokens = {2, 9}; });
  const std::string e = error_of([&] { test::torch_run_chain(s, {0}, -1).step(test::row_of(torch::tensor({1.0f, 2.0f, 3.0f})), 0, true); });
  EXPECT_EQ(e, "--suppress-tokens holds token id 9, which is not allowed; allowed: ids from 0 to 2 (the model's vocabulary)");
}

TEST(RunChain, NothingLeftNamesTheStepAndTheStage) {
  SamplingParams s = preset(Framework::hf, DecodeMode::sample, 1, [](SamplingParams& p) { p.controls.suppress_tokens = {0, 1}; });
  const std::string e = error_of([&] { test::torch_run_chain(s, {0}, -1).step(test::row_of(torch::tensor({1.0f, 2.0f})), 4, true); });
  EXPECT_EQ(e.rfind("step 4: no token is left to pick after the suppress_tokens stage", 0), 0u) << e;
}

}  // namespace
}  // namespace genrepro
