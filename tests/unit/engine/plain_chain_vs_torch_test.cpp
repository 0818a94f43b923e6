// The one chain (harness/sampling/) against the literal torch chains (tests/support/torch_chains:
// the article's and transformers' lines as torch ops) on the same vectors: the float32 operations
// (aten::exp, log, softmax, log_softmax, cumsum, sum, nansum against torch's own, bit for bit),
// then every preset on hundreds of random vectors (normal at three scales, values on a 0.5 grid for
// ties, 5 to 50,257 tokens) through many configurations, once with each row math: the written-out
// kernels `sample` uses and libtorch's, which the engine uses. After every stage the kept set and
// the scores' bits must be the reference's; then the final probabilities (max |dp| within
// kProbTolerance, and every bit) and the picks of generators seeded alike.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "support/torch_chains/framework_sampler.hpp"
#include "support/torch_chains/samplers.hpp"
#include "support/torch_chains/token_picker.hpp"
#include "engine/torch_row_math.hpp"
#include "engine/torch_runtime.hpp"
#include "params/framework_params.hpp"
#include "sampling/aten_float.hpp"
#include "sampling/presets.hpp"

namespace genrepro {
namespace {

constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

// How far a final probability of the plain chain may be from the engine's. The plain chain does
// the engine's float32 operations in the engine's order (measured: 0, every bit), so the bound
// only has to tell "the same distribution, a few ulps apart, should a kernel's order ever change"
// from "another distribution": a few float32 ulps of a probability <= 1 stay below 1e-6.
constexpr double kProbTolerance = 1e-6;

// genrepro's runs sum with one intra-op thread (engine/run_environment.cpp); with more, libtorch
// splits a sum of 32,768 or more values between threads (typical_p's and eta_cutoff's entropies on
// a 50,257-token row) and its bits follow the thread count.
class PlainChainVsTorch : public ::testing::Test {
 protected:
  void SetUp() override {
    threads_ = at::get_num_threads();
    set_torch_threads(1);
  }
  void TearDown() override { set_torch_threads(threads_); }

 private:
  int threads_ = 1;
};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::vector<float> to_vector(const torch::Tensor& t) {
  const torch::Tensor c = t.reshape({-1}).to(torch::kFloat32).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

torch::Tensor to_tensor(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kFloat32).clone();
}

// Random logits: normal * scale at three scales, or (every third block of 27) on a 0.5 grid, with
// many ties; sizes cycle through 9, from 5 tokens to GPT-2's 50,257.
std::vector<std::vector<float>> random_vectors(uint32_t seed, int count) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal;
  const std::vector<size_t> sizes = {5, 9, 16, 17, 64, 300, 1000, 2048, 50257};
  std::vector<std::vector<float>> out;
  for (int i = 0; i < count; ++i) {
    const size_t n = sizes[static_cast<size_t>(i) % sizes.size()];
    const float scale = std::array<float, 3>{0.5f, 2.0f, 6.0f}[static_cast<size_t>(i / 9) % 3];
    const bool grid = (i / 27) % 3 == 2;
    std::vector<float> v(n);
    for (float& x : v) x = grid ? std::round(normal(engine) * 4.0f) / 2.0f : normal(engine) * scale;
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<int32_t> kept_ids(const std::vector<float>& v) {
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] > kMinusInf) ids.push_back(static_cast<int32_t>(i));
  return ids;
}

// A stage that kept some and removed others of several tokens tied at its boundary value (the
// least kept input value is also the largest removed one): where the order of equal values decides
// which stay (rows over 16: torch.sort's own order).
bool straddles_a_tie(const std::vector<float>& input, const std::vector<float>& output) {
  float least_kept = std::numeric_limits<float>::infinity(), most_removed = kMinusInf;
  for (size_t i = 0; i < input.size(); ++i) {
    if (output[i] > kMinusInf) least_kept = std::min(least_kept, input[i]);
    else most_removed = std::max(most_removed, input[i]);
  }
  return most_removed > kMinusInf && least_kept == most_removed;
}

struct Tally {
  int64_t vectors = 0, stages = 0, set_mismatch = 0, bit_mismatch = 0, probs = 0, prob_bit_mismatch = 0;
  int64_t tie_boundaries = 0;  // stages whose kept set split tied tokens on a row over 16 (all must agree too)
  int64_t picks = 0, pick_mismatch = 0;
  double max_dp = 0;
  std::string report(const std::string& what) const {
    return "[plain vs torch " + what + "] " + std::to_string(vectors) + " vectors, " + std::to_string(stages) + " stages: " +
           std::to_string(set_mismatch) + " kept-set mismatches (" + std::to_string(tie_boundaries) +
           " stages split tied tokens on rows over 16), " +
           std::to_string(bit_mismatch) + " stages with other bits; " + std::to_string(probs) + " final probabilities: " +
           std::to_string(prob_bit_mismatch) + " with other bits, max |dp| " + std::to_string(max_dp) + "; " + std::to_string(picks) +
           " picks, " + std::to_string(pick_mismatch) + " different";
  }
};

// One configuration on every vector: `torch_stage(k, scores)` is the engine's stage k (the same
// list the plain preset runs), then softmax and the engine's picker; the plain chain's stages and
// draw come from the preset. A kept-set difference fails and ends that vector's comparison (the two
// chains then filter different sets); the draws of both still advance alike.
void compare(const SamplingParams& s, const std::vector<std::vector<float>>& vectors, const std::vector<int64_t>& history,
             const std::function<torch::Tensor(size_t, const torch::Tensor&)>& torch_stage, bool argmax, Tally& t,
             const sampling::RowMath& math) {
  const auto plain_draw = sampling::preset_draw(s, math);
  const std::unique_ptr<TokenPicker> picker = argmax ? nullptr : make_token_picker(s);
  const sampling::StageContext context{history, 1, 2, math};
  for (const std::vector<float>& logits : vectors) {
    ++t.vectors;
    const auto stages = sampling::preset_stages(s);
    torch::Tensor scores = to_tensor(logits).reshape({1, -1});
    sampling::Candidates cur(logits.data(), logits.size());
    bool diverged = false;
    for (size_t k = 0; k < stages.size() && !diverged; ++k) {
      const std::vector<float> input = to_vector(scores);
      scores = torch_stage(k, scores);
      stages[k]->apply(cur, context);
      const std::vector<float> engine = to_vector(scores);
      std::vector<float> plain(cur.size);
      for (size_t i = 0; i < cur.size; ++i) plain[i] = cur.data[i].logit;
      ++t.stages;
      const std::vector<int32_t> a = kept_ids(engine), b = kept_ids(plain);
      if (logits.size() > 16 && straddles_a_tie(input, engine)) ++t.tie_boundaries;
      if (a != b) {
        diverged = true;
        ++t.set_mismatch;
        ADD_FAILURE() << to_string(s.framework) << " stage " << stages[k]->name() << " on " << logits.size() << " tokens: kept "
                      << b.size() << ", the engine " << a.size();
      } else if (std::memcmp(engine.data(), plain.data(), engine.size() * sizeof(float)) != 0) {
        ++t.bit_mismatch;
      }
    }
    const torch::Tensor probs = torch::softmax(scores.reshape({-1}), 0);
    const auto drawn = plain_draw->draw(cur, true);
    const int64_t engine_pick = argmax ? scores.argmax().item<int64_t>() : picker->pick(probs);
    if (diverged) continue;
    if (!argmax) {
      const std::vector<float> p = to_vector(probs);
      for (size_t i = 0; i < p.size(); ++i) {
        ++t.probs;
        t.prob_bit_mismatch += bits(p[i]) != bits(cur.data[i].p) ? 1 : 0;
        t.max_dp = std::max(t.max_dp, std::fabs(static_cast<double>(p[i]) - cur.data[i].p));
      }
    }
    ++t.picks;
    if (drawn->token != engine_pick) {
      ++t.pick_mismatch;
      ADD_FAILURE() << to_string(s.framework) << " on " << logits.size() << " tokens: picked " << drawn->token << ", the engine "
                    << engine_pick;
    }
  }
}

void expect_agreement(const Tally& t, const std::string& what) {
  EXPECT_EQ(t.set_mismatch, 0);
  EXPECT_EQ(t.pick_mismatch, 0);
  EXPECT_LE(t.max_dp, kProbTolerance) << "another distribution";
  // docs/sampling.md says every bit is the engine's: a difference below the tolerance means one of
  // aten_float's kernels no longer follows libtorch's order.
  EXPECT_EQ(t.bit_mismatch, 0);
  EXPECT_EQ(t.prob_bit_mismatch, 0);
  std::cout << t.report(what) << "\n";
}

TEST_F(PlainChainVsTorch, FloatOperationsBitForBit) {
  // exp over dense ranges and random values; softmax and cumsum over many rows.
  std::vector<float> x;
  for (float v = -110.0f; v < 100.0f; v += 0.0013f) x.push_back(v);
  for (const auto& row : random_vectors(5, 60)) x.insert(x.end(), row.begin(), row.end());
  const std::vector<float> torch_exp = to_vector(torch::exp(to_tensor(x)));
  int64_t exp_mismatch = 0, libm_mismatch = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    exp_mismatch += bits(sampling::aten::exp(x[i])) != bits(torch_exp[i]) ? 1 : 0;
    libm_mismatch += bits(std::exp(x[i])) != bits(torch_exp[i]) ? 1 : 0;
  }
  EXPECT_EQ(exp_mismatch, 0) << "of " << x.size();
  // log over positive floats from subnormals to the largest (every 1009th bit pattern), and 0.
  std::vector<float> y = {0.0f};
  for (uint32_t b = 1; b < 0x7f800000u; b += 1009) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    y.push_back(f);
  }
  const std::vector<float> torch_log = to_vector(torch::log(to_tensor(y)));
  int64_t log_mismatch = 0, libm_log_mismatch = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    log_mismatch += bits(sampling::aten::log(y[i])) != bits(torch_log[i]) ? 1 : 0;
    libm_log_mismatch += bits(std::log(y[i])) != bits(torch_log[i]) ? 1 : 0;
  }
  EXPECT_EQ(log_mismatch, 0) << "of " << y.size();
  int64_t rows = 0, softmax_mismatch = 0, cumsum_mismatch = 0, log_softmax_mismatch = 0, sum_mismatch = 0;
  for (const auto& row : random_vectors(6, 162)) {
    ++rows;
    const torch::Tensor t = to_tensor(row);
    softmax_mismatch += to_vector(torch::softmax(t, 0)) != sampling::aten::softmax(row) ? 1 : 0;
    cumsum_mismatch += to_vector(torch::softmax(t, 0).cumsum(0)) != sampling::aten::cumsum(sampling::aten::softmax(row)) ? 1 : 0;
    log_softmax_mismatch += to_vector(torch::log_softmax(t, 0)) != sampling::aten::log_softmax(row) ? 1 : 0;
    // sum and nansum over the last dimension of [1, V], as the warpers call them; every 7th a NaN.
    std::vector<float> with_nan = row;
    for (size_t i = 0; i < with_nan.size(); i += 7) with_nan[i] = std::nanf("");
    const float sum = t.reshape({1, -1}).sum(-1).item<float>();
    const float nansum = to_tensor(with_nan).reshape({1, -1}).nansum(-1).item<float>();
    sum_mismatch += bits(sum) != bits(sampling::aten::cascade_sum(row.data(), row.size())) ? 1 : 0;
    sum_mismatch += bits(nansum) != bits(sampling::aten::cascade_sum(with_nan.data(), with_nan.size(), true)) ? 1 : 0;
  }
  EXPECT_EQ(softmax_mismatch, 0) << "of " << rows << " rows";
  EXPECT_EQ(cumsum_mismatch, 0) << "of " << rows << " rows";
  EXPECT_EQ(log_softmax_mismatch, 0) << "of " << rows << " rows";
  EXPECT_EQ(sum_mismatch, 0) << "of " << 2 * rows << " sums";
  std::cout << "[plain vs torch float ops] exp: " << exp_mismatch << " of " << x.size() << " values differ (std::exp: " << libm_mismatch
            << "); log: " << log_mismatch << " of " << y.size() << " (std::log: " << libm_log_mismatch << "); softmax " << softmax_mismatch
            << ", cumsum " << cumsum_mismatch << ", log_softmax " << log_softmax_mismatch << " of " << rows << " rows; sum and nansum "
            << sum_mismatch << " of " << 2 * rows << "\n";
}

TEST_F(PlainChainVsTorch, ArticleChainOnRandomVectors) {
  const auto vectors = random_vectors(11, 81);
  Tally t, t_torch;
  struct Config {
    double temperature;
    int64_t top_k;
    double top_p;
    TopPRule rule;
    bool temperature_last;
  };
  const std::vector<Config> configs = {{1.0, 0, 0.9, TopPRule::article, false}, {0.7, 0, 0.95, TopPRule::article, false},
                                       {1.3, 40, 0.8, TopPRule::article, false}, {0.5, 5, 1.0, TopPRule::article, false},
                                       {0.8, 0, 0.9, TopPRule::hf, false},       {2.0, 50, 0.6, TopPRule::hf, true},
                                       {0.001, 0, 0.9, TopPRule::article, false}, {1.0, 3, 0.3, TopPRule::article, true}};
  uint64_t seed = 41;
  for (const Config& c : configs) {
    SamplingParams s;
    s.mode = DecodeMode::sample;
    s.temperature = c.temperature;
    s.top_k = c.top_k;
    s.top_p = c.top_p;
    s.top_p_rule = c.rule;
    s.seed = seed++;
    if (c.temperature_last) s.sampler_order = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
    const auto torch_stage = [&s](size_t k, const torch::Tensor& scores) {
      const torch::Tensor row = scores.reshape({-1});
      switch (s.sampler_order[k]) {
        case SamplerStage::temperature: return apply_temperature(row, s.temperature);
        case SamplerStage::top_k: return top_k_filter(row, s.top_k);
        default: return s.top_p_rule == TopPRule::hf ? top_p_filter_hf(row, s.top_p) : top_p_filter(row, s.top_p);
      }
    };
    compare(s, vectors, {}, torch_stage, /*argmax=*/false, t, sampling::aten_float_math());
    compare(s, vectors, {}, torch_stage, /*argmax=*/false, t_torch, torch_row_math());
  }
  expect_agreement(t, "article, written-out kernels");
  expect_agreement(t_torch, "article, libtorch");
}

TEST_F(PlainChainVsTorch, HuggingFaceChainsOnRandomVectors) {
  const auto vectors = random_vectors(12, 81);
  const std::vector<int64_t> history = {0, 3, 1, 3, 4, 0, 3};
  Tally t, t_torch;
  std::vector<SamplingParams> configs;
  const auto hf = [&](DecodeMode mode, const std::function<void(SamplingParams&)>& set) {
    SamplingParams s;
    s.mode = mode;
    resolve_framework(s, Framework::hf);
    s.seed = 100 + configs.size();
    set(s);
    configs.push_back(s);
  };
  hf(DecodeMode::sample, [](SamplingParams&) {});  // the preset: top_k 50
  hf(DecodeMode::sample, [](SamplingParams& s) { s.temperature = 0.7, s.top_p = 0.9, s.controls.repetition_penalty = 1.3; });
  hf(DecodeMode::sample, [](SamplingParams& s) { s.controls.min_p = 0.05, s.controls.no_repeat_ngram_size = 2, s.top_k = 0; });
  hf(DecodeMode::sample, [](SamplingParams& s) { s.controls.typical_p = 0.9, s.top_k = 0; });
  hf(DecodeMode::sample, [](SamplingParams& s) { s.controls.typical_p = 0.5, s.temperature = 1.5; });
  hf(DecodeMode::sample, [](SamplingParams& s) { s.controls.epsilon_cutoff = 3e-4, s.top_k = 0; });
  hf(DecodeMode::sample, [](SamplingParams& s) { s.controls.eta_cutoff = 1e-3, s.top_k = 0; });
  hf(DecodeMode::sample, [](SamplingParams& s) {
    s.controls.sequence_bias = {{{3}, 1.5}, {{3, 4}, -0.75}, {{1, 2}, 2.0}};
    s.controls.bad_words_ids = {{0, 3}, {4}};
    s.controls.suppress_tokens = {1};
    s.controls.min_new_tokens = 3;
    s.controls.min_length = 9;
  });
  hf(DecodeMode::greedy, [](SamplingParams& s) { s.controls.repetition_penalty = 1.5, s.controls.no_repeat_ngram_size = 3; });
  for (const SamplingParams& s : configs) {
    const std::vector<SamplerStage> order = active_stages(s, sampling::picks_argmax(s));
    const FrameworkControls& c = s.controls;
    const auto torch_stage = [&](size_t k, const torch::Tensor& scores) {
      const int64_t length = static_cast<int64_t>(history.size());
      switch (order[k]) {
        case SamplerStage::sequence_bias: return hf::sequence_bias(scores, history, c.sequence_bias);
        case SamplerStage::repetition_penalty: return hf::repetition_penalty(scores, history, c.repetition_penalty);
        case SamplerStage::no_repeat_ngram_size: return hf::no_repeat_ngram(scores, history, c.no_repeat_ngram_size);
        case SamplerStage::bad_words_ids: return hf::bad_words(scores, history, c.bad_words_ids, 2);
        case SamplerStage::min_length: return hf::mask_eos_below(scores, length, c.min_length, 2);
        case SamplerStage::min_new_tokens: return hf::mask_eos_below(scores, length - 1, c.min_new_tokens, 2);
        case SamplerStage::suppress_tokens: return hf::suppress_tokens(scores, c.suppress_tokens);
        case SamplerStage::temperature: return hf::temperature(scores, s.temperature);
        case SamplerStage::top_k: return hf::top_k(scores, s.top_k);
        case SamplerStage::top_p: return hf::top_p(scores, s.top_p);
        case SamplerStage::min_p: return hf::min_p(scores, c.min_p);
        case SamplerStage::typical_p: return hf::typical(scores, c.typical_p);
        case SamplerStage::epsilon_cutoff: return hf::epsilon(scores, c.epsilon_cutoff);
        default: return hf::eta(scores, c.eta_cutoff);
      }
    };
    compare(s, vectors, history, torch_stage, sampling::picks_argmax(s), t, sampling::aten_float_math());
    compare(s, vectors, history, torch_stage, sampling::picks_argmax(s), t_torch, torch_row_math());
  }
  expect_agreement(t, "hf, written-out kernels");
  expect_agreement(t_torch, "hf, libtorch");
}

TEST_F(PlainChainVsTorch, LlamaCppChainIsTheEnginesOnRandomVectors) {
  // One implementation (sampling/llama_cpp_chain.hpp) behind both: the reference FrameworkSampler
  // and the plain preset must give the same distribution bits and picks, history included.
  const auto vectors = random_vectors(13, 162);
  int64_t compared = 0, differ = 0;
  for (uint64_t seed : {1u, 7u}) {
    SamplingParams s;
    s.mode = DecodeMode::sample;
    resolve_framework(s, Framework::llama_cpp);
    s.seed = seed;
    s.controls.repeat_penalty = 1.2;
    s.controls.frequency_penalty = 0.25;
    s.controls.repeat_last_n = 4;
    s.controls.typical_p = seed == 7 ? 0.9 : 1.0;
    const auto engine = make_framework_sampler(s);
    std::vector<int64_t> history = {0, 1, 2};
    sampling::Chain chain = sampling::make_chain(s, {history, -1});
    for (const auto& logits : vectors) {
      const FrameworkStep a = engine->step(to_tensor(logits), ChainHistory{history, 3, -1}, true);
      const sampling::ChainStep b = chain.step(logits);
      std::vector<float> p(logits.size(), 0.0f);
      for (const auto& cand : b.final) p[static_cast<size_t>(cand.id)] = cand.p;
      ++compared;
      differ += *a.token != b.pick->token || to_vector(a.final_probs) != p ? 1 : 0;
      history.push_back(*a.token % 5);  // a short history the next (smaller) vectors index too
      chain.accept(*a.token % 5);
    }
  }
  EXPECT_EQ(differ, 0) << "of " << compared;
  std::cout << "[plain vs engine llama.cpp] " << compared << " steps, " << differ << " with another pick or distribution\n";
}

}  // namespace
}  // namespace genrepro
