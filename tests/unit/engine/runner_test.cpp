// The runner on the tiny fixture: evidence independent of --threads; the BLAS the environment
// names is mapped in this process (which links libtorch, so libtorch's loader put it there);
// model sha256 against the streaming hash of the file; context errors before anything runs.
#include "engine/runner.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "model/model_files.hpp"
#include "util/sha256.hpp"
#include "engine/run_environment.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

class Runner : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("genrepro_runner_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path dir_;
  ModelFiles model_;
};

constexpr const char* kSmallGrid = R"({
  "name": "small", "prompts": ["the river bank was", "hello"], "max_new_tokens": 6,
  "runs": [{"mode": "greedy"},
           {"mode": "sample", "temperature": [0.7, 1.5], "top_p": 0.9, "seed": [1, 2], "use_cache": [false, true]}]
})";

TEST_F(Runner, EvidenceDoesNotDependOnThreads) {
  RunnerOptions o;
  o.experiments = load_experiments({write("small.json", kSmallGrid)});
  o.model = model_;
  o.threads = 1;
  const nlohmann::json one = strip_volatile(nlohmann::json(evidence_to_json(run_experiments(o))));
  o.threads = 3;
  const Evidence three_e = run_experiments(o);
  const nlohmann::json three = strip_volatile(nlohmann::json(evidence_to_json(three_e)));
  ASSERT_EQ(one["runs"].size(), 2u * (1 + 8));
  EXPECT_EQ(one, three);
  EXPECT_EQ(three_e.environment.threads.runs_concurrently, 3);
  EXPECT_EQ(three_e.environment.threads.intra_op, 1);
  for (size_t i = 0; i < three_e.runs.size(); ++i) EXPECT_EQ(three_e.runs[i].index, static_cast<int64_t>(i));
}

TEST_F(Runner, ShardsPartitionTheRuns) {
  RunnerOptions o;
  o.experiments = load_experiments({write("small.json", kSmallGrid)});
  o.model = model_;
  std::set<std::string> ids;
  size_t total = 0;
  for (int64_t i = 1; i <= 3; ++i) {
    o.shard = {i, 3};
    for (const auto& r : run_experiments(o).runs) {
      EXPECT_EQ(r.index % 3, i - 1);
      ids.insert(r.id);
      ++total;
    }
  }
  EXPECT_EQ(total, 18u);
  EXPECT_EQ(ids.size(), 18u);
}

TEST_F(Runner, ModelFilesAreHashedFromDisk) {
  const Gpt2Config config = read_gpt2_config(model_.config);
  const ModelInfo m = describe_model(model_, config);
  EXPECT_EQ(m.source, "fixture");
  EXPECT_EQ(m.files.at("model.safetensors").sha256, sha256_file(model_.weights).sha256);
  EXPECT_EQ(m.files.at("model.safetensors").bytes, fs::file_size(model_.weights));
  EXPECT_EQ(m.n_positions, config.n_positions);
}

TEST_F(Runner, BeyondContextIsRefusedBeforeAnythingRuns) {
  RunnerOptions o;
  o.experiments = load_experiments({write("long.json",
                              R"({"name": "long", "prompts": ["the river bank was"], "max_new_tokens": [5, 125],
                                  "runs": [{"mode": "greedy"}]})")});
  o.model = model_;
  bool planned = false;
  o.on_planned = [&](const RunPlan&) { planned = true; };
  try {
    run_experiments(o);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), o.experiments[0].path +
                                         ": max_new_tokens[1] = 125 is not allowed; allowed: at most 124 for prompts[0] "
                                         "(4 tokens) with this model's context of 128 tokens (n_positions in config.json)");
  }
  EXPECT_FALSE(planned);
}

TEST_F(Runner, TopCandidatesOverrideIsRecordedInTheSpec) {
  RunnerOptions o;
  o.experiments = load_experiments({write("small.json", kSmallGrid)});
  override_top_candidates(o.experiments[0], 2);  // what `genrepro run --top-candidates 2` does
  o.model = model_;
  o.shard = {1, 9};  // two runs are enough
  const Evidence e = run_experiments(o);
  EXPECT_EQ(e.experiments[0].spec["record"]["top_candidates"], 2);
  EXPECT_EQ(e.experiments[0].sha256, sha256_file(o.experiments[0].path).sha256);
  for (const auto& r : e.runs) {
    EXPECT_EQ(r.params.top_candidates, 2);
    EXPECT_EQ(r.result.steps.at(0).top.size(), 2u);
  }
}

TEST(RunEnvironment, BlasNamedIsMappedInThisProcess) {
  prepare_runtime_for_runs();
  const Environment env = collect_environment(1);
  ASSERT_TRUE(env.blas.resolved.has_value()) << "libtorch links a BLAS; sgemm_ must resolve";
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool mapped = false;
  while (std::getline(maps, line)) {
    if (line.size() >= env.blas.resolved->size() &&
        line.compare(line.size() - env.blas.resolved->size(), std::string::npos, *env.blas.resolved) == 0)
      mapped = true;
  }
  EXPECT_TRUE(mapped) << *env.blas.resolved << " is not in /proc/self/maps";
  EXPECT_EQ(env.threads.intra_op, 1);
  EXPECT_FALSE(env.libtorch_version.empty());
  EXPECT_NE(env.cpu_capability, "");
  if (env.blas.vendor == "openblas") EXPECT_EQ(env.blas.threads, 1);
}

}  // namespace
}  // namespace genrepro
