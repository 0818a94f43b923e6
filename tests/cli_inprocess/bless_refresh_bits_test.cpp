// bless --refresh-bits on real evidence: runs of the same cells in reference and in strict numerics
// agree (same tokens, probabilities within the tolerance) with other logits bits. A plain bless
// leaves them and says so; --refresh-bits rewrites each, listed, and the golden then compares
// bit for bit; a file whose numerics change is refreshed whole.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

using nlohmann::json;

class BlessRefreshBits : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir("bless-refresh-bits");
    const json spec = {{"name", "cells"},
                       {"prompts", {"the river bank was"}},
                       {"max_new_tokens", 4},
                       {"runs", {{{"mode", "greedy"}}, {{"mode", "sample"}, {"top_p", 0.9}, {"seed", {1, 2}}}}}};
    const std::string path = scratch_->write("spec.json", spec.dump());
    reference_ = *scratch_ / "reference.json";
    strict_ = *scratch_ / "strict.json";
    EXPECT_EQ(genrepro({"run", path, "--model", tiny_model(), "--out", reference_, "--numerics", "reference"}).exit, 0);
    EXPECT_EQ(genrepro({"run", path, "--model", tiny_model(), "--out", strict_}).exit, 0) << "strict is the default";
  }
  static void TearDownTestSuite() {
    delete scratch_;
    scratch_ = nullptr;
  }
  static json doc(const std::string& file) { return json::parse(read_bytes(file)); }
  static std::vector<std::string> digests(const json& run) {
    std::vector<std::string> out;
    for (const json& s : run["steps"]) out.push_back(s["logits_digest"].dump());
    return out;
  }
  std::string blessed_reference(const std::string& name) {
    const std::string into = *scratch_ / name;
    EXPECT_EQ(genrepro({"bless", reference_, "--into", into, "--yes"}).exit, 0);
    return into;
  }
  static ScratchDir* scratch_;
  static std::string reference_, strict_;
};
ScratchDir* BlessRefreshBits::scratch_ = nullptr;
std::string BlessRefreshBits::reference_, BlessRefreshBits::strict_;

TEST_F(BlessRefreshBits, PlainBlessLeavesBitOnlyDriftAndSaysHowToRefreshIt) {
  const std::string into = blessed_reference("plain");
  const std::string before = read_bytes(into + "/cells.json");
  const CliResult r = genrepro({"bless", strict_, "--into", into});
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  EXPECT_TRUE(Searches(R"re(nothing written \(3 run\(s\) agree with other bits; --refresh-bits rewrites them\))re", r.out)) << r.out;
  EXPECT_EQ(read_bytes(into + "/cells.json"), before);
}

TEST_F(BlessRefreshBits, RefreshRewritesEachListedRunAndTheGoldenThenMatchesBitForBit) {
  const std::string into = blessed_reference("refresh");
  const CliResult r = genrepro({"bless", strict_, "--into", into, "--refresh-bits"});
  EXPECT_EQ(r.exit, 0) << r.out << r.err;
  const json evidence = doc(strict_);
  for (const json& run : evidence["runs"])
    EXPECT_TRUE(Searches("unchanged run " + run["id"].get<std::string>() +
                             ": agrees with the golden; bits only: [0-9]+ of 4 steps' records differ .*numerics reference → strict; "
                             "refreshed \\(--refresh-bits\\)",
                         r.out))
        << r.out;
  EXPECT_TRUE(Searches(R"re(3 refreshed \(bits only\))re", r.out)) << r.out;
  const json golden = doc(into + "/cells.json");
  EXPECT_EQ(golden["numerics"]["mode"], "strict");
  ASSERT_EQ(golden["runs"].size(), evidence["runs"].size());
  for (std::size_t i = 0; i < golden["runs"].size(); ++i) EXPECT_EQ(digests(golden["runs"][i]), digests(evidence["runs"][i]));
  const CliResult d = genrepro({"diff", into, strict_});
  EXPECT_EQ(d.exit, 0) << d.out;
  EXPECT_FALSE(Searches("not bit-identical", d.out)) << d.out;
  // Nothing left to refresh.
  EXPECT_TRUE(Searches("nothing written\n", genrepro({"bless", strict_, "--into", into, "--refresh-bits"}).out));
}

// A golden file holds one numerics record: runs of reference and strict numerics never share one,
// so a file whose numerics change is refreshed whole or not at all, and --run naming part of it is
// refused before anything is written.
TEST_F(BlessRefreshBits, PartOfAFileWhoseNumericsChangeIsRefused) {
  const std::string into = blessed_reference("refresh-run");
  const std::string before = read_bytes(into + "/cells.json");
  const std::string chosen = doc(strict_)["runs"][1]["id"];
  const CliResult r = genrepro({"bless", strict_, "--into", into, "--refresh-bits", "--run", chosen});
  EXPECT_EQ(r.exit, 2) << r.out << r.err;
  EXPECT_TRUE(Searches("--refresh-bits --run " + chosen + ": .*cells.json holds runs of numerics reference → strict .*"
                       "its 3 drifted runs are refreshed together or not at all",
                       r.err))
      << r.err;
  EXPECT_EQ(read_bytes(into + "/cells.json"), before);
}

}  // namespace
}  // namespace genrepro::test
