// The cache axis of genrepro sensitivity (docs/sensitivity.md, "The cache axis"): which values the
// default design takes from the experiments, and the refusal of an experiment whose use_cache is a
// list (forced, its runs would coincide), in-process and before any child runs or anything is written.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "unit/cli/no_engine.hpp"
#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro::cli {
namespace {

namespace fs = std::filesystem;

test_support::VerbResult sensitivity(std::vector<std::string> args) {
  args.insert(args.begin(), "sensitivity");
  return test_support::run_without_engine(args);
}

TEST(SensitivityCache, AnExperimentThatListsUseCacheIsRefusedForAForcedCellBeforeAnythingRuns) {
  test::ScratchDir scratch("sens-cache");
  scratch.write("grid.json",
                R"({"name": "g", "prompts": ["a"], "runs": [{"mode": "greedy", "use_cache": [false, true]}]})");
  const std::string out = (scratch.path() / "m").string();
  const test_support::VerbResult r = sensitivity({(scratch.path() / "grid.json").string(), "--out", out, "--cells",
                                "kernels=portable;threads=1;numerics=reference;batch=1;blas=openblas;cache=as-written,cached"});
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("cache=cached: " + (scratch.path() / "grid.json").string() +
                       ": runs[0].use_cache is a list; the cache axis sets use_cache for every run"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("allowed: --cells cache=as-written"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));  // no child ran (the stand-in engine would have said 99), nothing written
}

TEST(SensitivityCache, EntriesThatDifferOnlyInUseCacheAreRefusedForAForcedCell) {
  test::ScratchDir scratch("sens-cache");
  scratch.write("twins.json", R"({"name": "t", "prompts": ["a"], "runs": [{"mode": "greedy", "use_cache": true},
                                  {"mode": "greedy", "use_cache": false}]})");
  const std::string out = (scratch.path() / "m").string();
  const test_support::VerbResult r = sensitivity({(scratch.path() / "twins.json").string(), "--out", out});
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_NE(r.err.find("twins.json: with use_cache forced its runs are not distinct"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("allowed: --cells cache=as-written for this experiment"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST(SensitivityCache, AForcedCellOfABadExperimentNamesTheUsersFile) {
  test::ScratchDir scratch("sens-cache");
  scratch.write("bad.json", R"({"name": "b", "prompts": ["a"], "runs": [{"mode": "greedy", "top_k": 3}]})");
  const test_support::VerbResult r = sensitivity({(scratch.path() / "bad.json").string(), "--out", (scratch.path() / "m").string()});
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_NE(r.err.find((scratch.path() / "bad.json").string() + ": runs[0].top_k"), std::string::npos) << r.err;
}

TEST(SensitivityCache, AnUnknownCacheValueNamesTheAllowed) {
  test::ScratchDir scratch("sens-cache");
  const test_support::VerbResult r = sensitivity({"x.json", "--out", (scratch.path() / "m").string(), "--cells", "cache=sometimes"});
  EXPECT_EQ(r.exit, kExitBadInput) << r.err;
  EXPECT_NE(r.err.find("--cells cache=sometimes: not offered on this machine; allowed: as-written, recompute, cached"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace genrepro::cli
