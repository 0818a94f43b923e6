// The strict forward on a small random GPT-2 written here (vocab 300, C 48, 4 heads of 12, two
// blocks: every width ragged against the kernels' 16 columns): its logits against the same math in
// double, and its promise — one sequence's logits have the same bits fed whole or token by token,
// alone or batched with sequences of other lengths, on one thread or two, on every kernel set —
// and its errors, which leave the caches as they were.
#include "strict/strict_gpt2.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "model/safetensors.hpp"
#include "strict/kernel_set.hpp"
#include "strict/thread_team.hpp"
#include "support/env_guard.hpp"
#include "support/scratch_dir.hpp"
#include "util/errors.hpp"
#include "util/splitmix64.hpp"

namespace genrepro::strict {
namespace {

constexpr int64_t kV = 300, kP = 40, kC = 48, kLayers = 2, kHeads = 4, kF = 4 * kC;

struct SmallModel {
  test::ScratchDir dir{"strict-gpt2"};
  ModelFiles files;
  std::vector<F32Tensor> tensors;

  const std::vector<float>& tensor(const std::string& name) const {
    for (const F32Tensor& t : tensors)
      if (t.name == name) return t.values;
    throw std::runtime_error("no tensor " + name);
  }
};

std::vector<float> uniform(size_t n, SplitMix64& rng, float center, float spread) {
  std::vector<float> v(n);
  for (float& x : v) x = center + spread * (static_cast<float>(rng.next() >> 40) / static_cast<float>(1 << 24) * 2.0f - 1.0f);
  return v;
}

// config.json and model.safetensors of a small GPT-2 with weights large enough that attention is
// far from uniform and the logits spread over several units.
std::unique_ptr<SmallModel> write_small_model(const std::string& activation = "gelu_new") {
  auto m = std::make_unique<SmallModel>();
  const nlohmann::json config = {{"model_type", "gpt2"},  {"vocab_size", kV},   {"n_positions", kP},
                                 {"n_embd", kC},          {"n_layer", kLayers}, {"n_head", kHeads},
                                 {"layer_norm_epsilon", 1e-5}, {"activation_function", activation},
                                 {"bos_token_id", kV - 1}, {"eos_token_id", kV - 1}};
  m->files.dir = m->dir.str();
  m->files.config = m->dir.write("config.json", config.dump());
  m->files.weights = m->dir / "model.safetensors";
  SplitMix64 rng(2024);
  const auto add = [&](const std::string& name, std::vector<int64_t> shape, float center, float spread) {
    size_t n = 1;
    for (int64_t s : shape) n *= static_cast<size_t>(s);
    m->tensors.push_back(F32Tensor{name, shape, uniform(n, rng, center, spread)});
  };
  add("wte.weight", {kV, kC}, 0.0f, 0.5f);
  add("wpe.weight", {kP, kC}, 0.0f, 0.2f);
  for (int64_t i = 0; i < kLayers; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    add(p + "ln_1.weight", {kC}, 1.0f, 0.2f);
    add(p + "ln_1.bias", {kC}, 0.0f, 0.1f);
    add(p + "attn.c_attn.weight", {kC, 3 * kC}, 0.0f, 0.35f);
    add(p + "attn.c_attn.bias", {3 * kC}, 0.0f, 0.1f);
    add(p + "attn.c_proj.weight", {kC, kC}, 0.0f, 0.15f);
    add(p + "attn.c_proj.bias", {kC}, 0.0f, 0.05f);
    add(p + "ln_2.weight", {kC}, 1.0f, 0.2f);
    add(p + "ln_2.bias", {kC}, 0.0f, 0.1f);
    add(p + "mlp.c_fc.weight", {kC, kF}, 0.0f, 0.2f);
    add(p + "mlp.c_fc.bias", {kF}, 0.0f, 0.1f);
    add(p + "mlp.c_proj.weight", {kF, kC}, 0.0f, 0.1f);
    add(p + "mlp.c_proj.bias", {kC}, 0.0f, 0.05f);
  }
  add("ln_f.weight", {kC}, 1.0f, 0.2f);
  add("ln_f.bias", {kC}, 0.0f, 0.1f);
  write_safetensors_f32(m->files.weights, m->tensors);
  return m;
}

const SmallModel& small_model() {
  static const std::unique_ptr<SmallModel> m = write_small_model();
  return *m;
}

StrictGpt2 load_small(const std::optional<std::string>& isa = std::nullopt, int64_t decodable = 0) {
  test::EnvGuard env("GENREPRO_STRICT_ISA", isa);
  return StrictGpt2::load(small_model().files, decodable);
}

// GPT-2's forward in double, transcribed from HF's modeling_gpt2.py with no attention to order:
// the logits of the last position.
std::vector<double> forward_in_double(const SmallModel& m, const std::vector<int64_t>& ids) {
  const auto t = [&](const std::string& name) { return m.tensor(name); };
  const int64_t T = static_cast<int64_t>(ids.size()), D = kC / kHeads;
  std::vector<std::vector<double>> x(T, std::vector<double>(kC));
  const auto wte = t("wte.weight"), wpe = t("wpe.weight");
  for (int64_t i = 0; i < T; ++i)
    for (int64_t c = 0; c < kC; ++c) x[i][c] = double(wte[ids[i] * kC + c]) + double(wpe[i * kC + c]);
  const auto layer_norm = [&](const std::vector<double>& v, const std::string& name) {
    const auto w = t(name + ".weight"), b = t(name + ".bias");
    double mean = 0, var = 0;
    for (double e : v) mean += e / kC;
    for (double e : v) var += (e - mean) * (e - mean) / kC;
    std::vector<double> y(kC);
    for (int64_t c = 0; c < kC; ++c) y[c] = (v[c] - mean) / std::sqrt(var + 1e-5) * w[c] + b[c];
    return y;
  };
  const auto conv1d = [&](const std::vector<double>& v, const std::string& name, int64_t out) {
    const auto w = t(name + ".weight"), b = t(name + ".bias");
    std::vector<double> y(out);
    for (int64_t j = 0; j < out; ++j) {
      double s = b[j];
      for (size_t k = 0; k < v.size(); ++k) s += v[k] * w[k * out + j];
      y[j] = s;
    }
    return y;
  };
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    std::vector<std::vector<double>> qkv(T);
    for (int64_t i = 0; i < T; ++i) qkv[i] = conv1d(layer_norm(x[i], p + "ln_1"), p + "attn.c_attn", 3 * kC);
    for (int64_t i = 0; i < T; ++i) {
      std::vector<double> merged(kC, 0.0);
      for (int64_t h = 0; h < kHeads; ++h) {
        std::vector<double> s(i + 1);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j <= i; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) dot += qkv[i][h * D + d] * qkv[j][kC + h * D + d];
          s[j] = dot / std::sqrt(double(D));
          mx = std::max(mx, s[j]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < D; ++d) merged[h * D + d] += s[j] / sum * qkv[j][2 * kC + h * D + d];
      }
      const auto proj = conv1d(merged, p + "attn.c_proj", kC);
      for (int64_t c = 0; c < kC; ++c) x[i][c] += proj[c];
    }
    for (int64_t i = 0; i < T; ++i) {
      auto hidden = conv1d(layer_norm(x[i], p + "ln_2"), p + "mlp.c_fc", kF);
      for (double& v : hidden) v = 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      const auto out = conv1d(hidden, p + "mlp.c_proj", kC);
      for (int64_t c = 0; c < kC; ++c) x[i][c] += out[c];
    }
  }
  const auto last = layer_norm(x[T - 1], "ln_f");
  std::vector<double> logits(kV);
  for (int64_t j = 0; j < kV; ++j) {
    double s = 0;
    for (int64_t c = 0; c < kC; ++c) s += last[c] * wte[j * kC + c];
    logits[j] = s;
  }
  return logits;
}

uint32_t bits_of(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

::testing::AssertionResult same_bits(const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes " << got.size() << " vs " << want.size();
  for (size_t i = 0; i < got.size(); ++i)
    if (bits_of(got[i]) != bits_of(want[i]))
      return ::testing::AssertionFailure() << "logit " << i << ": " << got[i] << " vs " << want[i];
  return ::testing::AssertionSuccess();
}

std::vector<int64_t> ids_of(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::vector<int64_t> ids(n);
  for (int64_t& id : ids) id = static_cast<int64_t>(rng.below(kV));
  return ids;
}

// The whole sequence in one call (the article's use_cache=False).
std::vector<float> recompute(const StrictGpt2& model, const std::vector<int64_t>& ids, ThreadTeam& team) {
  StrictCache cache = model.make_cache(static_cast<int64_t>(ids.size()));
  std::vector<float> logits(static_cast<size_t>(model.logits_size()));
  model.forward({&cache}, {ids}, logits.data(), team);
  EXPECT_EQ(cache.length, static_cast<int64_t>(ids.size()));
  return logits;
}

// One token at a time; the logits after each.
std::vector<std::vector<float>> token_by_token(const StrictGpt2& model, const std::vector<int64_t>& ids, ThreadTeam& team) {
  StrictCache cache = model.make_cache(1);  // grows on the way
  std::vector<std::vector<float>> out;
  for (int64_t id : ids) {
    out.emplace_back(static_cast<size_t>(model.logits_size()));
    model.forward({&cache}, {{id}}, out.back().data(), team);
  }
  return out;
}

// float32 against double: each logit is a 48-term dot product after two blocks of float32
// arithmetic, in which every rounding moves it by a few 1e-7 relative; measured max 2e-6 on
// logits of magnitude up to about 10. 2e-5 absolute leaves room for the other kernel sets' (equal)
// bits and still catches wrong math: a missing 1/sqrt(head_dim) moves logits by more than 0.1, exact
// GELU for gelu_new by 1e-3, eps 1e-6 for 1e-5 by 1e-4.
constexpr double kDoubleTolerance = 2e-5;

TEST(StrictGpt2, LogitsFollowTheMathInDouble) {
  ThreadTeam team(1);
  const StrictGpt2 model = load_small();
  EXPECT_EQ(model.logits_size(), kV);
  EXPECT_EQ(model.config().n_embd, kC);
  for (const size_t n : {size_t{1}, size_t{5}, size_t{kP}}) {
    const auto ids = ids_of(n, n);
    const auto got = recompute(model, ids, team);
    const auto want = forward_in_double(small_model(), ids);
    double worst = 0, scale = 0;
    for (int64_t j = 0; j < kV; ++j) {
      worst = std::max(worst, std::fabs(got[j] - want[j]));
      scale = std::max(scale, std::fabs(want[j]));
    }
    EXPECT_LE(worst, kDoubleTolerance) << "n = " << n;
    EXPECT_GT(scale, 1.0) << "logits too flat to test anything";
    std::printf("n = %zu: max |strict - double| %.3g over logits up to %.3g\n", n, worst, scale);
  }
}

TEST(StrictGpt2, RecomputeCachedBatchedAndThreadsGiveTheSameBits) {
  const StrictGpt2 model = load_small();
  ThreadTeam one(1), two(2);
  const auto a = ids_of(23, 1), b = ids_of(9, 2), c = ids_of(17, 3);
  const auto steps_a = token_by_token(model, a, one);
  // Recompute at every length equals the cached step at that length.
  for (size_t n = 1; n <= a.size(); n += 3) {
    const std::vector<int64_t> prefix(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_TRUE(same_bits(recompute(model, prefix, one), steps_a[n - 1])) << "length " << n;
    EXPECT_TRUE(same_bits(recompute(model, prefix, two), steps_a[n - 1])) << "length " << n << ", two threads";
  }
  // Three sequences fed together, each a prompt chunk of its own length, then decoded together
  // step by step, on two threads: every row equals its sequence alone.
  const auto steps_b = token_by_token(model, b, one);
  const auto steps_c = token_by_token(model, c, one);
  StrictCache ca = model.make_cache(4), cb = model.make_cache(40), cc = model.make_cache(2);
  const size_t V = static_cast<size_t>(model.logits_size());
  std::vector<float> rows(3 * V);
  const auto row = [&](size_t i) { return std::vector<float>(rows.begin() + i * V, rows.begin() + (i + 1) * V); };
  model.forward({&ca, &cb, &cc}, {{a.begin(), a.begin() + 7}, {b.begin(), b.begin() + 2}, {c.begin(), c.begin() + 5}},
                rows.data(), two);
  EXPECT_TRUE(same_bits(row(0), steps_a[6]));
  EXPECT_TRUE(same_bits(row(1), steps_b[1]));
  EXPECT_TRUE(same_bits(row(2), steps_c[4]));
  for (size_t s = 0; s < 7; ++s) {
    model.forward({&ca, &cb, &cc}, {{a[7 + s]}, {b[2 + s]}, {c[5 + s]}}, rows.data(), s % 2 == 0 ? two : one);
    EXPECT_TRUE(same_bits(row(0), steps_a[7 + s])) << "step " << s;
    EXPECT_TRUE(same_bits(row(1), steps_b[2 + s])) << "step " << s;
    EXPECT_TRUE(same_bits(row(2), steps_c[5 + s])) << "step " << s;
  }
  EXPECT_EQ(ca.length, 14);
  EXPECT_EQ(cb.length, 9);
  EXPECT_EQ(cc.length, 12);
}

TEST(StrictGpt2, EveryKernelSetGivesTheSameBits) {
  ThreadTeam team(2);
  const auto ids = ids_of(kP, 5);
  const StrictGpt2 plain = load_small("plain");
  EXPECT_STREQ(plain.kernel_isa(), "plain");
  const auto want = recompute(plain, ids, team);
  for (const KernelSet* set : supported_kernel_sets()) {
    const StrictGpt2 model = load_small(to_string(set->isa));
    EXPECT_STREQ(model.kernel_isa(), to_string(set->isa));
    EXPECT_TRUE(same_bits(recompute(model, ids, team), want)) << to_string(set->isa);
  }
  EXPECT_STREQ(load_small().kernel_isa(), to_string(supported_kernel_sets().back()->isa));
}

TEST(StrictGpt2, PaddedVocabularyComputesOnlyTheDecodableIds) {
  ThreadTeam team(1);
  const StrictGpt2 full = load_small();
  const StrictGpt2 padded = load_small(std::nullopt, 290);
  EXPECT_EQ(padded.logits_size(), 290);
  const auto ids = ids_of(6, 9);
  const auto all = recompute(full, ids, team);
  EXPECT_TRUE(same_bits(recompute(padded, ids, team), std::vector<float>(all.begin(), all.begin() + 290)));
  // A padded id is still a valid input.
  StrictCache cache = padded.make_cache(2);
  std::vector<float> logits(290);
  padded.forward({&cache}, {{295}}, logits.data(), team);
}

// Runs `stmt`, expects UsageError whose one-line message contains `needle`.
#define EXPECT_USAGE_ERROR(stmt, needle)                                                        \
  do {                                                                                          \
    try {                                                                                       \
      stmt;                                                                                     \
      ADD_FAILURE() << #stmt " did not throw";                                                  \
    } catch (const UsageError& e) {                                                             \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();             \
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();               \
    }                                                                                           \
  } while (0)

TEST(StrictGpt2, BadIdsAndContextAreUsageErrorsThatLeaveTheCachesAlone) {
  ThreadTeam team(1);
  const StrictGpt2 model = load_small();
  const std::string config = small_model().files.config;
  StrictCache fed = model.make_cache(8), other = model.make_cache(8);
  std::vector<float> logits(2 * static_cast<size_t>(model.logits_size()));
  model.forward({&fed}, {ids_of(5, 1)}, logits.data(), team);
  const StrictCache before = fed;
  const auto unchanged = [&](const StrictCache& c) {
    EXPECT_EQ(c.length, before.length);
    EXPECT_EQ(c.capacity, before.capacity);
    EXPECT_EQ(c.keys, before.keys);
    EXPECT_EQ(c.values, before.values);
  };
  EXPECT_USAGE_ERROR(model.forward({&fed}, {{}}, logits.data(), team),
                     "GPT-2 forward: no token ids to feed; the model needs at least one token");
  unchanged(fed);
  EXPECT_USAGE_ERROR(model.forward({&fed}, {{3, 300}}, logits.data(), team),
                     "GPT-2 forward: token id 300 at position 6 is outside the vocabulary of " + config +
                         " (vocab_size 300); ids must be in [0, 299]");
  unchanged(fed);
  EXPECT_USAGE_ERROR(model.forward({&fed}, {{-1}}, logits.data(), team), "token id -1 at position 5");
  unchanged(fed);
  EXPECT_USAGE_ERROR(model.forward({&fed}, {ids_of(36, 2)}, logits.data(), team),
                     "GPT-2 forward: a sequence of 41 tokens exceeds the context of " + config +
                         " (n_positions 40); feed at most 40 tokens");
  unchanged(fed);
  // A bad sequence in a batch stops the whole call before any cache changes.
  EXPECT_USAGE_ERROR(model.forward({&other, &fed}, {{1, 2}, {kV}}, logits.data(), team), "token id 300");
  unchanged(fed);
  EXPECT_EQ(other.length, 0);
  EXPECT_EQ(other.capacity, 8);
  // Exactly the context fits.
  model.forward({&fed}, {ids_of(35, 2)}, logits.data(), team);
  EXPECT_EQ(fed.length, kP);
}

TEST(StrictGpt2, MisuseIsRefused) {
  ThreadTeam team(1);
  const StrictGpt2 model = load_small();
  std::vector<float> logits(2 * static_cast<size_t>(model.logits_size()));
  StrictCache a = model.make_cache(4);
  EXPECT_THROW(model.forward({&a, &a}, {{1}, {2}}, logits.data(), team), std::invalid_argument);
  EXPECT_THROW(model.forward({&a}, {{1}, {2}}, logits.data(), team), std::invalid_argument);
  StrictCache foreign;
  foreign.keys.resize(1);
  foreign.length = 1;
  EXPECT_THROW(model.forward({&foreign}, {{1}}, logits.data(), team), std::invalid_argument);
  // A default-constructed cache is an empty one.
  StrictCache empty;
  model.forward({&empty}, {{1, 2, 3}}, logits.data(), team);
  EXPECT_EQ(empty.length, 3);
  EXPECT_EQ(model.make_cache(1000).capacity, kP);
}

TEST(StrictGpt2, LoadRefusesWhatItCannotComputeBitForBit) {
  const auto gelu = write_small_model("gelu");
  try {
    StrictGpt2::load(gelu->files);
    FAIL() << "no throw";
  } catch (const ModelFileError& e) {
    EXPECT_NE(std::string(e.what()).find(gelu->files.config + ": activation_function \"gelu\" has no strict kernel"),
              std::string::npos)
        << e.what();
  }
  test::EnvGuard env("GENREPRO_STRICT_ISA", std::string("avx9000"));
  EXPECT_THROW(StrictGpt2::load(small_model().files), UsageError);
}

}  // namespace
}  // namespace genrepro::strict
