// Proofs that no speed-up changes a bit within a numerics mode, on the tiny fixture:
// a preallocated KV cache against one grown step by step, a run started from a shared prefill
// against a fresh prefill, a batched step against each row alone (reference: where the probe
// proved it; tiled: always), and whole runs decoded in batches against run_generation alone.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "engine/batched_decoder.hpp"
#include "engine/generation_loop.hpp"
#include "engine/gpt2_model.hpp"
#include "engine/logits_source.hpp"
#include "engine/numerics_probe.hpp"
#include "engine/numerics_setup.hpp"
#include "engine/run_environment.hpp"
#include "engine/runner.hpp"
#include "evidence/environment.hpp"
#include "model/model_files.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (!a.sizes().equals(b.sizes())) return false;
  const auto ac = a.contiguous(), bc = b.contiguous();
  return std::memcmp(ac.data_ptr(), bc.data_ptr(), static_cast<size_t>(ac.numel()) * ac.element_size()) == 0;
}

const Gpt2Model& tiny() {
  static const Gpt2Model model = Gpt2Model::load(locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag));
  return model;
}

const std::vector<std::vector<int64_t>> kPrompts = {
    {1169, 7850, 3331, 373}, {31373}, {464, 2068, 7586, 21831, 18045, 625, 262}, {40, 716}, {1169}};

// Greedy continuation of `prompt` for `steps` tokens with the given cache, logits per step.
std::vector<torch::Tensor> cached_logits(const Gpt2Model& m, KvCache cache, const std::vector<int64_t>& prompt,
                                         int steps, const LinearLayout& layout = {}) {
  std::vector<torch::Tensor> out;
  torch::Tensor logits = m.forward_cached(cache, prompt, layout).select(0, -1).clone();
  for (int s = 0; s < steps; ++s) {
    out.push_back(logits);
    logits = m.forward_cached(cache, {logits.argmax().item<int64_t>()}, layout).select(0, -1).clone();
  }
  return out;
}

TEST(KvCache, PreallocatedGivesTheBitsOfOneGrownStepByStep) {
  set_blas_threads(1);
  for (size_t p = 0; p < 3; ++p) {
    const auto& prompt = kPrompts[p];
    const auto grown = cached_logits(tiny(), KvCache{}, prompt, 18);  // grows 1, 2, 4, ... tokens
    const auto preallocated = cached_logits(tiny(), tiny().make_cache(static_cast<int64_t>(prompt.size()) + 18), prompt, 18);
    ASSERT_EQ(grown.size(), preallocated.size());
    for (size_t s = 0; s < grown.size(); ++s) ASSERT_TRUE(same_bits(grown[s], preallocated[s])) << "step " << s;
  }
}

TEST(KvCache, CachedDecodingMatchesRecomputeTokens) {
  // The cache reads a view of preallocated memory; the article's recompute loop never caches.
  set_blas_threads(1);
  const auto prompt = kPrompts[0];
  std::vector<int64_t> ids = prompt;
  KvCache cache = tiny().make_cache(64);
  torch::Tensor logits = tiny().forward_cached(cache, prompt).select(0, -1);
  for (int s = 0; s < 10; ++s) {
    const torch::Tensor full = tiny().forward(ids).select(0, -1);
    ASSERT_EQ(logits.argmax().item<int64_t>(), full.argmax().item<int64_t>()) << "step " << s;
    ASSERT_TRUE(torch::allclose(logits, full, 1e-4, 1e-4)) << "step " << s;
    ids.push_back(logits.argmax().item<int64_t>());
    logits = tiny().forward_cached(cache, {ids.back()}).select(0, -1);
  }
}

TEST(SharedPrefill, ACopiedCacheGivesTheBitsOfAFreshPrefill) {
  set_blas_threads(1);
  for (const auto& prompt : kPrompts) {
    KvCache shared = tiny().make_cache(static_cast<int64_t>(prompt.size()));
    tiny().forward_cached(shared, prompt);
    KvCache copy = tiny().copy_cache(shared, static_cast<int64_t>(prompt.size()) + 30);
    KvCache fresh = tiny().make_cache(static_cast<int64_t>(prompt.size()) + 30);
    tiny().forward_cached(fresh, prompt);
    for (int64_t id : {464, 50256, 13, 262}) {
      ASSERT_TRUE(same_bits(tiny().forward_cached(copy, {id}), tiny().forward_cached(fresh, {id})));
    }
    // The copy is its own: feeding it left the shared cache where it was.
    EXPECT_EQ(shared.length, static_cast<int64_t>(prompt.size()));
  }
}

// B caches at different lengths (one per prompt), one batched step, each row against the same
// step alone with the reference layout on one BLAS thread (the evidence's bits).
void expect_batched_rows_equal_alone(int64_t batch, int blas_threads, const LinearLayout& batched_layout,
                                     const LinearLayout& alone_layout) {
  std::vector<KvCache> caches, alone;
  std::vector<int64_t> ids;
  set_blas_threads(1);
  for (int64_t b = 0; b < batch; ++b) {
    const auto& prompt = kPrompts[static_cast<size_t>(b) % kPrompts.size()];
    caches.push_back(tiny().make_cache(32));
    tiny().forward_cached(caches.back(), prompt, batched_layout);
    alone.push_back(tiny().copy_cache(caches.back(), 32));
    ids.push_back(100 + 7 * b);
  }
  std::vector<KvCache*> pointers;
  for (KvCache& c : caches) pointers.push_back(&c);
  set_blas_threads(blas_threads);
  const torch::Tensor rows = tiny().forward_step(pointers, ids, batched_layout);
  set_blas_threads(1);
  for (int64_t b = 0; b < batch; ++b) {
    const torch::Tensor one = tiny().forward_cached(alone[static_cast<size_t>(b)], {ids[static_cast<size_t>(b)]}, alone_layout)[0];
    ASSERT_TRUE(same_bits(rows[b], one)) << "batch " << batch << " row " << b << " on " << blas_threads << " BLAS threads";
  }
}

TEST(BatchedStep, ReferenceRowsKeepTheirBitsInEveryBatchTheProbeProves) {
  const NumericsProbeResult probe = probe_numerics(tiny(), NumericsProbeLimits{2, 16, 1});
  ASSERT_GE(probe.at(1).max_rows, 1);  // one row alone is the reference itself
  for (const RowBatchProof& proof : probe.rows)
    for (int64_t b = 1; b <= proof.max_rows; ++b) expect_batched_rows_equal_alone(b, proof.blas_threads, {}, {});
}

TEST(BatchedStep, TiledRowsHaveTheSameBitsInEveryBatch) {
  const NumericsProbeResult probe = probe_numerics(tiny(), NumericsProbeLimits{1, 1, 16});
  ASSERT_GE(probe.tile, 1);
  const LinearLayout tiled{probe.tile};
  for (int64_t b : std::vector<int64_t>{1, 2, 3, probe.tile, probe.tile + 1, 2 * probe.tile + 3}) expect_batched_rows_equal_alone(b, 1, tiled, tiled);
}

TEST(NumericsSetup, ABatchBeyondTheProofIsRefusedUnlessAllowed) {
  NumericsProbeResult probe;
  probe.rows = {RowBatchProof{1, 3}, RowBatchProof{2, 12}};
  probe.tile = 8;
  NumericsRequest request;
  request.batch = 13;
  try {
    choose_numerics(request, probe, 2, 60);
    FAIL() << "--batch 13 beyond a proof of 12 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--batch 13: the numerics probe proved at most 12 rows"), std::string::npos) << e.what();
  }
  request.allow_inexact_batch = true;
  const NumericsSetup inexact = choose_numerics(request, probe, 2, 60);
  EXPECT_TRUE(inexact.record.inexact_batch);
  EXPECT_EQ(numerics_identity_json(inexact.record).value("inexact_batch", false), true);
  request = NumericsRequest{};
  const NumericsSetup reference = choose_numerics(request, probe, 2, 60);
  EXPECT_EQ(reference.batch.batch, 12);
  EXPECT_EQ(reference.batch.decode_blas_threads, 2);
  EXPECT_EQ(reference.workers, 1);
  EXPECT_EQ(reference.batch.layout.tile, 0);
  request.mode = NumericsMode::tiled;
  const NumericsSetup tiled = choose_numerics(request, probe, 2, 60);
  EXPECT_EQ(tiled.record.tile, 8);
  EXPECT_EQ(tiled.batch.decode_blas_threads, 1);
  EXPECT_EQ(tiled.workers, 2);
}

RunParams sampled(double temperature, uint64_t seed, int64_t max_new_tokens) {
  RunParams p;
  p.max_new_tokens = max_new_tokens;
  p.use_cache = true;
  p.stop_at_eos = true;
  p.top_candidates = 5;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.temperature = temperature;
  p.sampling.top_p = 0.9;
  p.sampling.seed = seed;
  return p;
}

// Every job decoded in batches of `settings`, results by job.
std::vector<GenerationResult> decode_all(const std::vector<DecodeJob>& jobs, const BatchSettings& settings) {
  std::vector<GenerationResult> results(jobs.size());
  size_t next = 0;
  decode_batched(
      tiny(), jobs, settings, [&]() -> std::optional<size_t> { return next < jobs.size() ? std::optional<size_t>(next++) : std::nullopt; },
      [](int64_t id) { return std::to_string(id); }, [&](size_t k, GenerationResult r) { results[k] = std::move(r); });
  return results;
}

void expect_same_records(const GenerationResult& a, const GenerationResult& b, const std::string& what) {
  ASSERT_EQ(a.output_ids, b.output_ids) << what;
  ASSERT_EQ(a.stop_reason, b.stop_reason) << what;
  ASSERT_EQ(a.steps.size(), b.steps.size()) << what;
  for (size_t s = 0; s < a.steps.size(); ++s) {
    const StepRecord &x = a.steps[s], &y = b.steps[s];
    ASSERT_EQ(x.token_id, y.token_id) << what << " step " << s;
    // A batch's row of logits is bit for bit the lone run's, so is its digest.
    ASSERT_TRUE(x.logits_digest.has_value() && y.logits_digest.has_value()) << what << " step " << s;
    ASSERT_EQ(*x.logits_digest, *y.logits_digest) << what << " step " << s;
    ASSERT_EQ(std::memcmp(&x.prob, &y.prob, sizeof x.prob), 0) << what << " step " << s;
    ASSERT_EQ(std::memcmp(&x.entropy, &y.entropy, sizeof x.entropy), 0) << what << " step " << s;
    ASSERT_EQ(x.kept, y.kept) << what << " step " << s;
    ASSERT_EQ(x.top.size(), y.top.size()) << what;
    for (size_t c = 0; c < x.top.size(); ++c) {
      ASSERT_EQ(x.top[c].id, y.top[c].id);
      ASSERT_EQ(std::memcmp(&x.top[c].prob, &y.top[c].prob, sizeof(double)), 0) << what << " step " << s;
    }
  }
}

TEST(BatchedDecoder, RunsInBatchesRecordWhatEachRunRecordsAlone) {
  // Runs of different prompts, temperatures, seeds and lengths (some stop at EOS, so runs leave
  // and join mid-batch); prompts repeat, so prefills are shared.
  std::vector<RunParams> params;
  std::vector<std::vector<int64_t>> prompts;
  for (int i = 0; i < 9; ++i) {
    params.push_back(sampled(i % 3 == 0 ? 0.7 : 1.3, 1 + static_cast<uint64_t>(i), 2 + (i * 5) % 11));
    prompts.push_back(kPrompts[static_cast<size_t>(i) % 3]);
  }
  std::vector<DecodeJob> jobs;
  for (size_t i = 0; i < params.size(); ++i) jobs.push_back(DecodeJob{&prompts[i], &params[i]});
  const NumericsProbeResult probe = probe_numerics(tiny(), NumericsProbeLimits{1, 16, 1});
  set_blas_threads(1);
  std::vector<GenerationResult> alone;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto source = make_cached_source(tiny());
    alone.push_back(run_generation(*source, prompts[i], params[i], tiny().config().eos_token_id,
                                   [](int64_t id) { return std::to_string(id); }));
  }
  for (int64_t batch : std::vector<int64_t>{1, probe.at(1).max_rows}) {
    BatchSettings settings;
    settings.batch = batch;
    const auto batched = decode_all(jobs, settings);
    for (size_t i = 0; i < jobs.size(); ++i) expect_same_records(batched[i], alone[i], "batch " + std::to_string(batch) + " run " + std::to_string(i));
  }
}

class BatchedRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("genrepro_batched_runner_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string path = (dir_ / "grid.json").string();
    std::ofstream(path) << R"({"name": "grid", "prompts": ["the river bank was", "hello"], "max_new_tokens": 6,
      "use_cache": true, "runs": [{"mode": "sample", "temperature": [0.7, 1.3], "top_p": 0.9, "seed": [1, 2]},
                                  {"mode": "greedy"}, {"mode": "greedy", "use_cache": false}]})";
    options_.experiments = load_experiments({path});
    options_.model = locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag);
  }
  void TearDown() override { fs::remove_all(dir_); }
  nlohmann::json runs(NumericsMode mode, std::optional<int64_t> batch, int threads) {
    RunnerOptions o = options_;
    o.numerics.mode = mode;
    o.numerics.batch = batch;
    o.threads = threads;
    const Evidence e = run_experiments(o);
    EXPECT_TRUE(e.numerics.has_value());
    EXPECT_EQ(e.numerics->mode, mode);
    return strip_volatile(nlohmann::json(evidence_to_json(e)))["runs"];
  }
  fs::path dir_;
  RunnerOptions options_;
};

TEST_F(BatchedRunner, ReferenceEvidenceIsTheSameAloneBatchedAndOnTwoCores) {
  const nlohmann::json alone = runs(NumericsMode::reference, 1, 1);
  ASSERT_EQ(alone.size(), 2u * 6);
  EXPECT_EQ(runs(NumericsMode::reference, std::nullopt, 1), alone);
  EXPECT_EQ(runs(NumericsMode::reference, std::nullopt, 2), alone);
}

TEST_F(BatchedRunner, TiledEvidenceIsTheSameAloneBatchedAndOnTwoCores) {
  const nlohmann::json alone = runs(NumericsMode::tiled, 1, 1);
  EXPECT_EQ(runs(NumericsMode::tiled, 5, 1), alone);
  EXPECT_EQ(runs(NumericsMode::tiled, std::nullopt, 2), alone);
}

}  // namespace
}  // namespace genrepro
