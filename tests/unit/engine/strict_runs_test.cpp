// Strict numerics through the runner: a run's evidence is the same bytes whatever the batch, the
// thread count, the runs beside it or the cache (recompute vs KV cache), with no probe and nothing
// pinned; and it names its mode and kernel revision. Reference numerics cannot promise this (the
// probe decides), so these are the strict mode's own guarantees, checked on the tiny fixture.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "engine/runner.hpp"
#include "model/model_files.hpp"
#include "strict/strict_gpt2.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

// Greedy, the article's sampling and both frameworks' presets, with and without the cache, two
// prompts of different lengths (so batched rows sit at different positions).
constexpr const char* kStrictGrid = R"({
  "name": "strict-grid", "prompts": ["the river bank was", "Once upon a time, in a land far away,"], "max_new_tokens": 6,
  "runs": [{"mode": "greedy", "use_cache": [true, false]},
           {"mode": "sample", "temperature": [0.7, 1.3], "top_k": 40, "top_p": 0.9, "seed": [1, 2], "use_cache": [true, false]},
           {"framework": "hf", "mode": "sample", "temperature": 0.8, "seed": 3, "repetition_penalty": 1.3},
           {"framework": "llama.cpp", "mode": "sample", "temperature": 0.8, "seed": 4, "min_p": 0.05}]
})";

class StrictRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("genrepro_strict_runs_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string path = (dir_ / "strict.json").string();
    std::ofstream(path) << kStrictGrid;
    options_.experiments = load_experiments({path});
    options_.model = locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag);
    options_.numerics.mode = NumericsMode::strict;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The evidence as compared (volatile fields aside) of a run with these settings.
  nlohmann::json evidence(int threads, std::optional<int64_t> batch) {
    RunnerOptions o = options_;
    o.threads = threads;
    o.numerics.batch = batch;
    last_ = run_experiments(o);
    return strip_volatile(nlohmann::json(evidence_to_json(last_)));
  }

  fs::path dir_;
  RunnerOptions options_;
  Evidence last_;
};

TEST_F(StrictRuns, TheBytesDoNotDependOnBatchThreadsOrNeighbours) {
  const nlohmann::json alone = evidence(1, 1);
  ASSERT_EQ(alone["runs"].size(), 2u * (2 + 8 + 2));
  EXPECT_EQ(alone["numerics"], (nlohmann::json{{"mode", "strict"}, {"kernel_revision", strict::kStrictKernelRevision}}));
  EXPECT_EQ(evidence(2, std::nullopt), alone) << "two threads, every cached run in one batch";
  // The cached runs: per prompt, greedy and the four samples with use_cache true (the presets'
  // runs take the experiment's default, the article's recompute loop).
  EXPECT_EQ(last_.numerics->execution.at("batch").get<int64_t>(), 2 * (1 + 4));
  EXPECT_EQ(evidence(2, 3), alone) << "batches of 3: runs join as others finish";
  // A shard holds other neighbours again.
  options_.shard = {2, 3};
  const nlohmann::json shard = evidence(2, std::nullopt);
  for (const auto& run : shard["runs"]) EXPECT_EQ(run, alone["runs"][run["index"].get<size_t>()]) << run["id"];
}

TEST_F(StrictRuns, RecomputeAndTheCacheGiveTheSameSteps) {
  const CacheEquivalenceEvidence both = run_with_and_without_cache(options_);
  ASSERT_EQ(both.recompute.runs.size(), both.cached.runs.size());
  for (size_t i = 0; i < both.recompute.runs.size(); ++i) {
    const RunRecord& slow = both.recompute.runs[i];
    const RunRecord& fast = both.cached.runs[i];
    EXPECT_EQ(slow.result.output_ids, fast.result.output_ids) << slow.id;
    ASSERT_EQ(slow.result.steps.size(), fast.result.steps.size()) << slow.id;
    for (size_t s = 0; s < slow.result.steps.size(); ++s) {
      EXPECT_EQ(slow.result.steps[s].logits_digest, fast.result.steps[s].logits_digest) << slow.id << " step " << s;
      EXPECT_EQ(slow.result.steps[s].prob, fast.result.steps[s].prob) << slow.id << " step " << s;
      EXPECT_EQ(slow.result.steps[s].entropy, fast.result.steps[s].entropy) << slow.id << " step " << s;
    }
  }
}

}  // namespace
}  // namespace genrepro
