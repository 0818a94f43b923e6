// genrepro diff --sensitivity / --allow-fragile on the command line: the flags, their
// messages and exit codes, and the fragility block in text and --json, with a matrix that
// `sensitivity --compare` builds from golden/fixture's greedy run and the same file again. Which
// divergence gets which label is tests/unit/compare/fragility_test.cpp's, on planted flips.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

bool shows(const std::string& text, const std::string& pattern) { return regex_search(pattern, text); }

const std::string kGreedyGolden = source_path("golden/fixture/greedy.json");

std::string matrix(const ScratchDir& dir) {
  const CliResult r = genrepro({"sensitivity", "--compare", kGreedyGolden, kGreedyGolden, "--out", dir / "m"});
  EXPECT_EQ(r.exit, 0) << r.err;
  return dir / "m/sensitivity.json";
}

TEST(DiffFragility, AgreeingRunsSayThereIsNothingToLabelAndExit0) {
  const ScratchDir dir("fragility-cli");
  const std::string m = matrix(dir);
  const CliResult r = genrepro({"diff", kGreedyGolden, kGreedyGolden, "--sensitivity", m});
  EXPECT_EQ(r.exit, 0) << r.err;
  EXPECT_TRUE(shows(r.out, "fragility \\(.*sensitivity\\.json: 1 cells against its reference, 1 runs, m\\* none\\):\n"
                                       "  no run's tokens diverged: nothing to label\n"))
      << r.out;
  const CliResult j = genrepro({"diff", kGreedyGolden, kGreedyGolden, "--sensitivity", m, "--json"});
  ASSERT_EQ(j.exit, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  ASSERT_TRUE(doc.contains("fragility")) << j.out;
  EXPECT_EQ(doc["fragility"]["compared_cells"], 1);
  EXPECT_TRUE(doc["fragility"]["m_star"].is_null());
  EXPECT_TRUE(doc["fragility"]["runs"].empty());
  // Without --sensitivity the report has no such block.
  const CliResult plain = genrepro({"diff", kGreedyGolden, kGreedyGolden});
  EXPECT_EQ(plain.out.find("fragility"), std::string::npos) << plain.out;
}

TEST(DiffFragility, BadFlagsAndFilesAreOneLineAndExit2) {
  const ScratchDir dir("fragility-cli");
  const CliResult alone = genrepro({"diff", kGreedyGolden, kGreedyGolden, "--allow-fragile"});
  EXPECT_EQ(alone.exit, 2);
  EXPECT_EQ(alone.err, "genrepro: error: --allow-fragile needs --sensitivity FILE: without a matrix no divergence is known to "
                       "be fragile\n");
  // Evidence is not a matrix: the file and the field are named.
  const CliResult evidence = genrepro({"diff", kGreedyGolden, kGreedyGolden, "--sensitivity", kGreedyGolden});
  EXPECT_EQ(evidence.exit, 2);
  EXPECT_TRUE(shows(evidence.err, "^genrepro: error: .*greedy\\.json: schema: is \"genrepro\\.evidence/[0-9]+\", "
                                              "expected \"genrepro\\.sensitivity/1\"; give the sensitivity\\.json .*\n$"))
      << evidence.err;
  const CliResult report = genrepro({"report", kGreedyGolden, "--sensitivity", matrix(dir), "--out", dir / "r"});
  EXPECT_EQ(report.exit, 2);
  EXPECT_EQ(report.err, "genrepro: error: --sensitivity labels the verdict against the golden; give --golden DIR|FILE too\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "r")) << "nothing is written when the command is refused";
  const CliResult none = genrepro({"diff", kGreedyGolden, kGreedyGolden, "--sensitivity", dir / "absent.json"});
  EXPECT_EQ(none.exit, 2);
  EXPECT_TRUE(shows(none.err, "^genrepro: error: .*absent\\.json: no such file[^\n]*\n$")) << none.err;
}

}  // namespace
}  // namespace genrepro::test
