// The command line in-process, without libtorch: a recording stand-in for the engine verbs shows
// which requests reach the engine, and that bad input never does. Typos get the nearest verb or
// flag; --version names the build, libtorch and the BLAS.
#include "cli/run_cli.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "unit/cli/no_engine.hpp"

namespace genrepro::cli {
namespace {

class RecordingEngine final : public EngineVerbs {
 public:
  int generate(const GenerateRequest& r, Console&) override {
    generated.push_back(r);
    return kExitOk;
  }
  int run(const RunRequest& r, Console&) override {
    ran.push_back(r);
    return kExitOk;
  }
  int replay(const ReplayRequest&, Console&) override { return ++replays, kExitOk; }
  int env(const EnvRequest&, Console&) override { return ++envs, kExitOk; }
  std::vector<GenerateRequest> generated;
  std::vector<RunRequest> ran;
  int replays = 0, envs = 0;
};

using Result = test_support::VerbResult;

Result cli(const std::vector<std::string>& args, RecordingEngine& engine) { return test_support::run_verb(args, engine); }

TEST(RunCli, MistypedVerbSuggestsTheNearest) {
  RecordingEngine engine;
  const Result r = cli({"generat", "--prompt", "x"}, engine);
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.err, "genrepro: error: 'generat' is not a verb; did you mean 'generate'? (see 'genrepro --help')\n");
  EXPECT_TRUE(engine.generated.empty());
  EXPECT_EQ(cli({"xyzzy"}, engine).err, "genrepro: error: 'xyzzy' is not a verb (see 'genrepro --help')\n");
  EXPECT_NE(cli({}, engine).err.find("give a verb: generate, tokenize, sample, plan, run, diff"), std::string::npos);
}

TEST(RunCli, MistypedFlagSuggestsTheNearestFlagOfThatVerb) {
  RecordingEngine engine;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"generate", "--prompt", "x", "--temprature", "1"},
        std::vector<std::string>{"generate", "--prompt", "x", "--temprature=1"}}) {
    const Result r = cli(args, engine);
    EXPECT_EQ(r.exit, kExitBadInput);
    EXPECT_EQ(r.err, "genrepro: error: unknown flag --temprature for 'generate'; did you mean --temperature? "
                     "(see 'genrepro generate --help')\n");
  }
  EXPECT_EQ(cli({"run", "x.json", "--shrd", "1/2"}, engine).err,
            "genrepro: error: unknown flag --shrd for 'run'; did you mean --shard? (see 'genrepro run --help')\n");
  EXPECT_TRUE(engine.generated.empty());
  EXPECT_TRUE(engine.ran.empty());
}

TEST(RunCli, EngineVerbsGetTheCheckedTypedRequest) {
  RecordingEngine engine;
  const Result r = cli({"generate", "--prompt", "the river bank was", "--top-p", "0.9", "--seed", "43"}, engine);
  EXPECT_EQ(r.exit, kExitOk) << r.err;
  ASSERT_EQ(engine.generated.size(), 1u);
  EXPECT_EQ(engine.generated[0].prompt, "the river bank was");
  EXPECT_EQ(engine.generated[0].params.sampling.mode, DecodeMode::sample);
  EXPECT_EQ(engine.generated[0].params.sampling.top_p, 0.9);
  EXPECT_EQ(engine.generated[0].params.sampling.seed, 43u);
  EXPECT_FALSE(engine.generated[0].model.require_real);
  ASSERT_EQ(cli({"generate", "--prompt", "x", "--require-real-model", "--model", "gpt2"}, engine).exit, kExitOk);
  EXPECT_TRUE(engine.generated.back().model.require_real);
  EXPECT_EQ(engine.generated.back().model.dir, "gpt2");
  // A bad value is refused before the engine (and libtorch) is ever reached.
  const Result bad = cli({"generate", "--prompt", "x", "--top-p", "2"}, engine);
  EXPECT_EQ(bad.exit, kExitBadInput);
  EXPECT_EQ(engine.generated.size(), 2u);
}

TEST(RunCli, VersionNamesTheBuildLibtorchAndTheBlas) {
  RecordingEngine engine;
  const Result r = cli({"--version"}, engine);
  EXPECT_EQ(r.exit, kExitOk);
  EXPECT_EQ(r.out.rfind("genrepro ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("(commit "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nlibtorch 1."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nBLAS "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace genrepro::cli
