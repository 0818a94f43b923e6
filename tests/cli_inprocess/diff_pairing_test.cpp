// genrepro diff across a parameter change: the 2 prompts x 3 temperatures x 5 seeds
// grid run on the tiny fixture, then the same grid with top_p 0.9 -> 0.95. Every run id changes
// (ids hash every parameter), so matching by id alone sees 30 missing and 30 extra runs; pairing
// by experiment, prompt, seed and grid position gives 30 pairs, each with the parameter change as
// its verdict, while the gate still fails (exit 1). 3 new tokens a run keep the 60 runs cheap:
// pairing does not depend on the length.
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

using nlohmann::json;

constexpr int kPrompts = 2, kTemperatures = 3, kSeeds = 5;
constexpr int kRuns = kPrompts * kTemperatures * kSeeds;

std::string grid(double top_p) {
  json spec = {{"name", "grid"},
               {"prompts", {"the river bank was", "once upon a time"}},
               {"max_new_tokens", 3},
               {"runs", {{{"mode", "sample"}, {"temperature", {0.7, 1.0, 1.3}}, {"top_p", top_p}, {"seed", {1, 2, 3, 4, 5}}}}}};
  return spec.dump();
}

class DiffPairing : public ::testing::Test {
 protected:
  // Both grids run once for the whole suite: 60 runs of the tiny model.
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir("pairing");
    for (const auto& [name, top_p] : {std::pair<std::string, double>{"golden", 0.9}, {"new", 0.95}}) {
      const std::string spec = scratch_->write(name + "-grid.json", grid(top_p));
      const CliResult r = genrepro({"run", spec, "--model", tiny_model(), "--out", *scratch_ / (name + ".json"), "--threads", "1"});
      ASSERT_EQ(r.exit, 0) << r.out << r.err;
    }
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static std::string golden() { return *scratch_ / "golden.json"; }
  static std::string current() { return *scratch_ / "new.json"; }
  static ScratchDir* scratch_;
};
ScratchDir* DiffPairing::scratch_ = nullptr;

TEST_F(DiffPairing, TopPChangePairsEveryRunAndStillFails) {
  const CliResult r = genrepro({"diff", golden(), current()});
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
  EXPECT_TRUE(Searches(R"re(parameter change: top_p 0.9 → 0.95 \(30 pairs of runs paired by \["experiment","prompt","seed","position"\])re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(diff: 0 runs compared, 0 agree, 0 differ; 30 paired across a parameter change \(other ids: not a pass\); 0 missing, 0 extra)re", r.out)) << r.out;
  EXPECT_FALSE(Searches(R"re(missing run|extra run)re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(nucleus \(kept\): mean [0-9.e+]+ → [0-9.e+]+ over new tokens 1-[1-3] \(same context\), median .*; stop: )re", r.out)) << r.out;
}

TEST_F(DiffPairing, JsonPairsTheSameCellAndNamesTheChange) {
  const CliResult r = genrepro({"diff", golden(), current(), "--json"});
  ASSERT_EQ(r.exit, 1) << r.err;
  const json d = json::parse(r.out);
  EXPECT_FALSE(d["agree"].get<bool>());
  EXPECT_EQ(d["summary"]["paired"], kRuns);
  EXPECT_EQ(d["summary"]["missing"], 0);
  EXPECT_EQ(d["summary"]["extra"], 0);
  ASSERT_EQ(d["pairs"].size(), static_cast<std::size_t>(kRuns));
  const json golden_doc = json::parse(read_bytes(golden())), new_doc = json::parse(read_bytes(current()));
  std::map<std::string, json> golden_runs, new_runs;
  for (const json& run : golden_doc["runs"]) golden_runs[run["id"]] = run;
  for (const json& run : new_doc["runs"]) new_runs[run["id"]] = run;
  std::set<std::string> seen_new;
  for (const json& p : d["pairs"]) {
    SCOPED_TRACE(p.dump());
    EXPECT_EQ(p["verdict"], "parameter change: top_p 0.9 → 0.95");
    ASSERT_EQ(p["change"].size(), 1u);
    EXPECT_EQ(p["change"][0]["path"], "params.top_p");
    // The pair is the same cell: prompt, temperature and seed agree; only top_p moved.
    const json& g = golden_runs.at(p["golden_id"]);
    const json& n = new_runs.at(p["new_id"]);
    EXPECT_EQ(g["prompt_index"], n["prompt_index"]);
    EXPECT_EQ(g["params"]["seed"], n["params"]["seed"]);
    EXPECT_EQ(g["params"]["temperature"], n["params"]["temperature"]);
    EXPECT_NE(g["params"]["top_p"], n["params"]["top_p"]);
    EXPECT_TRUE(seen_new.insert(p["new_id"]).second) << "a new run paired twice";
    // A kept-set parameter changed: the cause, by docs/diff.md's precedence.
    EXPECT_EQ(p["cause"], "kept_set_change");
    EXPECT_EQ(p["stop"]["golden"]["step"], 3);
  }
}

// By id only (--pair-by none) the same two files are all missing and extra.
TEST_F(DiffPairing, ByIdOnlyEverythingIsMissingAndExtra) {
  const CliResult r = genrepro({"diff", golden(), current(), "--pair-by", "none", "--brief"});
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(Searches(R"re(30 missing, 30 extra)re", r.out)) << r.out;
}

// A key list that pairs nothing one-to-one (every run of a prompt shares experiment and prompt)
// leaves the runs unpaired rather than guessing.
TEST_F(DiffPairing, AmbiguousKeysPairNothing) {
  const CliResult r = genrepro({"diff", golden(), current(), "--pair-by", "experiment,prompt", "--brief"});
  EXPECT_EQ(r.exit, 1);
  EXPECT_TRUE(Searches(R"re(; 30 missing, 30 extra)re", r.out)) << r.out;
  EXPECT_FALSE(Searches(R"re(paired)re", r.out)) << r.out;
}

TEST_F(DiffPairing, BriefIsOneLinePerPairAndTheSummary) {
  const CliResult r = genrepro({"diff", golden(), current(), "--brief"});
  EXPECT_EQ(r.exit, 1);
  std::size_t lines = 0, paired = 0;
  for (std::size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1) {
    ++lines;
    if (r.out.compare(at, 11, "paired run ") == 0) ++paired;
  }
  EXPECT_EQ(paired, static_cast<std::size_t>(kRuns)) << r.out;
  EXPECT_LE(lines, static_cast<std::size_t>(kRuns) + 2) << r.out;  // + an environment count line, + the summary
}

TEST_F(DiffPairing, JunitHasOneFailingCasePerPair) {
  const std::string xml = *scratch_ / "out/diff.xml";
  const CliResult r = genrepro({"diff", golden(), current(), "--junit", xml, "--brief"});
  EXPECT_EQ(r.exit, 1) << r.err;
  const std::string text = read_bytes(xml);
  EXPECT_TRUE(Searches(R"re(tests="30" failures="30")re", text)) << text.substr(0, 400);
  EXPECT_TRUE(Searches(R"re(<failure type="paired" message="paired run grid/p0/.* → grid/p0/.*: parameter change: top_p 0.9 → 0.95)re", text));
}

TEST(DiffPairBy, UnknownKeyIsOneLineNamingTheAllowedKeys) {
  expect_case({"bad_pair_by",
               {"diff", source_path("tests/cli/data/diff/golden.json"), source_path("tests/cli/data/diff/same.json"), "--pair-by",
                "experiment,colour"},
               2, "", R"re(--pair-by experiment,colour: unknown key "colour"; allowed \(comma-separated\): experiment, prompt, position, mode, temperature)re",
               Stderr::one_line});
}

// The report's A/B view pairs the same way: one row per pair (golden id → new id) with the
// parameter change, none of the 60 runs listed as missing from one file.
TEST_F(DiffPairing, TheReportSideBySidePairsTheRunsToo) {
  const std::string out = *scratch_ / "report";
  const CliResult r = genrepro({"report", golden(), current(), "--out", out, "--label", "p09", "--label", "p095"});
  ASSERT_EQ(r.exit, 0) << r.out << r.err;
  const std::string md = read_bytes(out + "/report.md");
  EXPECT_TRUE(Searches(R"re(30 rows pair two runs whose ids differ because a parameter changed)re", md)) << md.substr(0, 4000);
  std::size_t rows = 0;
  const std::string verdict = "parameter change: top\\_p 0.9 → 0.95; the ";  // Markdown escapes '_'
  for (std::size_t at = md.find(verdict); at != std::string::npos; at = md.find(verdict, at + 1)) ++rows;
  EXPECT_GE(rows, static_cast<std::size_t>(kRuns)) << "every pair's row names the change";
  EXPECT_FALSE(Searches(R"re(\(not in this file\))re", md)) << "a paired run was listed as missing from one file";
}

}  // namespace
}  // namespace genrepro::test
