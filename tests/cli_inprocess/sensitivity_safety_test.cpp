// genrepro sensitivity keeps the project's rules before any cell runs (in-process: nothing here
// starts a child): --cells values checked as run checks them, each once; --compare refuses the
// flags it would ignore and evidence of another model or experiment; outputs never written over
// inputs, all three or none; --out that cannot be made is bad input; the plan sees what run
// refuses and leaves out cells that cannot change any run.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const std::string kGolden = source_path("golden/fixture/greedy.json");
const std::string kOtherExperiment = source_path("golden/fixture/eos.json");
// The reference cell alone: every axis named with one value.
const std::string kOneCell = "kernels=portable;threads=1;numerics=reference;batch=1;cache=as-written;blas=openblas";

std::string recompute_experiment(const ScratchDir& dir, const std::string& name = "exp.json") {
  return dir.write(name, R"({"name": "s", "prompts": ["the river bank was"], "max_new_tokens": 2, "use_cache": false,
                             "runs": [{"mode": "greedy"}], "record": {"top_candidates": 2}})");
}

void expect_refused(const std::vector<std::string>& args, const std::string& regex) {
  const CliResult r = genrepro(args);
  EXPECT_EQ(r.exit, 2) << describe(args, r);
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << describe(args, r);  // one line
  EXPECT_TRUE(Searches(regex, r.err)) << describe(args, r);
}

TEST(SensitivityCells, AValueGivenTwiceOrAnAxisNamedTwiceIsRefused) {
  ScratchDir dir("sens-cells");
  const std::string exp = recompute_experiment(dir);
  expect_refused({"sensitivity", exp, "--out", dir / "m", "--cells", "threads=1,1", "--model", tiny_model()},
                 R"re(--cells threads=1: given twice in threads=1,1; allowed: each value once)re");
  expect_refused({"sensitivity", exp, "--out", dir / "m", "--cells", "threads=1;threads=2", "--model", tiny_model()},
                 R"re(--cells: the axis threads is named twice)re");
  EXPECT_FALSE(fs::exists(dir / "m"));
}

TEST(SensitivityCells, EveryValueRunTakesIsAValueHere) {
  ScratchDir dir("sens-values");
  const std::string exp = recompute_experiment(dir);
  // threads beyond --threads' default of 2, an inexact batch of 8, a core named in OpenBLAS's lower case.
  const CliResult r = genrepro({"sensitivity", exp, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells",
                                "kernels=portable;threads=1,3;numerics=reference;batch=1,8-inexact;cache=as-written;blas=openblas"});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_TRUE(Searches(R"re(threads-3.*genrepro run .* --threads 3)re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(batch-8-inexact.*--batch 8 --allow-inexact-batch)re", r.out)) << r.out;
  EXPECT_FALSE(fs::exists(dir / "m"));
  expect_refused({"sensitivity", exp, "--out", dir / "m", "--model", tiny_model(), "--cells", "threads=1,300"},
                 R"re(--cells threads=300: allowed: a whole number from 1 to 256)re");
  expect_refused({"sensitivity", exp, "--out", dir / "m", "--model", tiny_model(), "--cells", "kernels=portable,native:Bulldozer"},
                 R"re(--cells kernels=native:Bulldozer: this CPU has no fma4, xop, which OpenBLAS's Bulldozer kernels use .*allowed: portable)re");
}

TEST(SensitivityPlan, SeesTheRunCountAndTheEvidenceSizeRunRefuses) {
  ScratchDir dir("sens-plan");
  ordered_json j = ordered_json::parse(read_bytes(source_path("experiments/article/greedy.json")));
  ordered_json seeds = ordered_json::array(), top_k = ordered_json::array();
  for (int s = 0; s < 500; ++s) {
    seeds.push_back(s);
    top_k.push_back(s + 1);
  }
  j["runs"] = ordered_json::array({{{"mode", "sample"}, {"seed", seeds}, {"top_k", top_k}}});
  const std::string huge = dir.write("huge.json", j.dump());
  expect_refused({"sensitivity", huge, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells", kOneCell},
                 R"re(huge.json: .*250000 runs.*more than --max-runs 100000)re");
  j = ordered_json::parse(read_bytes(source_path("experiments/article/greedy.json")));
  j["record"]["top_candidates"] = 50257;
  const std::string wide = dir.write("wide.json", j.dump());
  expect_refused({"sensitivity", wide, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells", kOneCell},
                 R"re(sensitivity: every cell's genrepro run would refuse this: the evidence of these 1 runs would be about)re");
}

TEST(SensitivityPlan, BatchCellsOfARecomputeOnlyGridAreLeftOutOrMarked) {
  ScratchDir dir("sens-batch");
  const std::string exp = recompute_experiment(dir);
  const CliResult left = genrepro({"sensitivity", exp, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells",
                                   "kernels=portable;threads=1;numerics=reference;cache=as-written;blas=openblas"});
  ASSERT_EQ(left.exit, 0) << left.err;
  EXPECT_TRUE(Searches(R"re(^plan: 1 cells, 1 runs)re", left.out.substr(left.out.rfind("plan:")))) << left.out;
  EXPECT_TRUE(Searches(R"re(sensitivity: left out batch=proven, batch=4-inexact, batch=16-inexact: every run recomputes)re", left.err))
      << left.err;
  const CliResult named = genrepro({"sensitivity", exp, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells",
                                    "kernels=portable;threads=1;numerics=reference;batch=1,4-inexact;cache=as-written;blas=openblas"});
  ASSERT_EQ(named.exit, 0) << named.err;
  EXPECT_TRUE(Searches(R"re(batch-4-inexact_blas-openblas: 1 runs, roughly [^\n]* \(cannot change any run: every run of this cell recomputes)re",
                       named.out))
      << named.out;
  // A KV-cache cell of the same grid can be changed by batching: kept, unmarked.
  const CliResult cached = genrepro({"sensitivity", exp, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells",
                                     "kernels=portable;threads=1;numerics=reference;batch=1,4-inexact;cache=cached;blas=openblas"});
  ASSERT_EQ(cached.exit, 0) << cached.err;
  EXPECT_EQ(cached.out.find("cannot change any run"), std::string::npos) << cached.out;
}

TEST(SensitivityCompare, FlagsItWouldIgnoreAreRefused) {
  ScratchDir dir("sens-flags");
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--cells", "threads=1"}, {"--threads", "4"}, {"--max-runs", "10"}, {"--model", tiny_model()}, {"--require-real-model"}, {"--plan"}}) {
    std::vector<std::string> args = {"sensitivity", "--compare", kGolden, kGolden, "--out", dir / "m"};
    args.insert(args.end(), extra.begin(), extra.end());
    expect_refused(args, extra[0] + R"re(: allowed without --compare only)re");
  }
  expect_refused({"sensitivity", recompute_experiment(dir), "--out", dir / "m", "--reference", kGolden},
                 R"re(--reference: allowed with --compare only)re");
  EXPECT_FALSE(fs::exists(dir / "m"));
}

TEST(SensitivityCompare, EvidenceOfAnotherModelOrExperimentIsRefused) {
  ScratchDir dir("sens-subject");
  ordered_json other = ordered_json::parse(read_bytes(kGolden));
  other["model"]["files"]["model.safetensors"]["sha256"] = std::string(64, 'e');
  const std::string weights = dir.write("weights.json", other.dump(1));
  expect_refused({"sensitivity", "--compare", kGolden, weights, "--out", dir / "m"},
                 R"re(weights.json: model.files\["model.safetensors"\].sha256 eeeeeeeeeeee… differs from the reference .*greedy.json's)re");
  expect_refused({"sensitivity", "--compare", kGolden, kOtherExperiment, "--out", dir / "m"},
                 R"re(eos.json: experiment "eos" is not among the reference .*greedy.json's experiments)re");
  ordered_json empty = ordered_json::parse(read_bytes(kGolden));
  empty["runs"] = ordered_json::array();
  expect_refused({"sensitivity", "--compare", dir.write("empty.json", empty.dump(1)), kGolden, "--out", dir / "m"},
                 R"re(empty.json: holds no runs)re");
  EXPECT_FALSE(fs::exists(dir / "m"));
  // The same evidence twice is a matrix (of one identical cell).
  const CliResult ok = genrepro({"sensitivity", "--compare", kGolden, dir.write("copy.json", read_bytes(kGolden)), "--out", dir / "m"});
  EXPECT_EQ(ok.exit, 0) << ok.err;
}

TEST(SensitivityOutputs, AnOutDirectoryThatCannotBeMadeIsBadInput) {
  expect_refused({"sensitivity", "--compare", kGolden, kGolden, "--out", "/proc/self/nope/m"},
                 R"re(--out /proc/self/nope/m: cannot create the directory)re");
}

TEST(SensitivityOutputs, NeverOverAnInputAndAllThreeOrNone) {
  ScratchDir dir("sens-outputs");
  fs::create_directories(dir / "m");
  const std::string input = dir.write("m/sensitivity.json", read_bytes(kGolden));
  const std::string copy = dir.write("copy.json", read_bytes(kGolden));
  expect_refused({"sensitivity", "--compare", input, copy, "--out", dir / "m"},
                 R"re(its sensitivity.json is the input .*which the matrix would overwrite)re");
  EXPECT_EQ(read_bytes(input), read_bytes(kGolden));
  // An experiment inside --out's cells/, which a matrix replaces.
  const std::string inside = recompute_experiment(dir, "m/cells/exp.json");
  expect_refused({"sensitivity", inside, "--out", dir / "m", "--plan", "--model", tiny_model(), "--cells", kOneCell},
                 R"re(the input .*cells/exp.json is inside its cells/)re");
  // A write that fails part-way (sensitivity.html cannot be replaced: a directory is in its
  // place) leaves the other two as they were, not one matrix's JSON beside another's Markdown.
  fs::create_directories(dir / "o/sensitivity.html");
  const std::string old_json = dir.write("o/sensitivity.json", "old json\n");
  const std::string old_md = dir.write("o/sensitivity.md", "old md\n");
  const CliResult r = genrepro({"sensitivity", "--compare", kGolden, copy, "--out", dir / "o"});
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_TRUE(Searches(R"re(sensitivity: cannot write .*sensitivity.html: .*nothing was replaced)re", r.err)) << r.err;
  EXPECT_EQ(read_bytes(old_json), "old json\n");
  EXPECT_EQ(read_bytes(old_md), "old md\n");
  for (const auto& e : fs::directory_iterator(dir / "o"))
    EXPECT_TRUE(e.path().filename() == "sensitivity.json" || e.path().filename() == "sensitivity.md" ||
                e.path().filename() == "sensitivity.html")
        << e.path();  // no temporary left behind
}

}  // namespace
}  // namespace genrepro::test
