// The consistency layer through the verbs: a golden edited in one field is refused by
// diff with exit 2 and one line when its tokenizer is at hand; without it the texts are not
// checked, the note says so, and diff still compares every text against the golden's — candidate
// texts included, so a tokenizer regression in a max_new_tokens 0 run is a regression (exit 1).
#include <filesystem>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/env_guard.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

using nlohmann::ordered_json;

// A copy of golden/fixture/NAME in `scratch`, model.path pointing nowhere (the tokenizer is then
// at hand only through $GENREPRO_TOKENIZER_DIR), after `edit`.
std::string golden_copy(const ScratchDir& scratch, const std::string& name, const std::string& as,
                        const std::function<void(ordered_json&)>& edit = {}) {
  ordered_json j = ordered_json::parse(read_bytes(source_path("golden/fixture/" + name)));
  j["model"]["path"] = "/nonexistent/genrepro-consistency-cli-model";
  if (edit) edit(j);
  return scratch.write(as, j.dump(2) + "\n");
}

void forge_candidate_text(ordered_json& j) { j["runs"][0]["steps"][0]["top"][0]["text"] = "<b>X</b>"; }

TEST(ConsistencyCli, DiffRefusesAForgedCandidateTextWhenTheTokenizerIsAtHand) {
  const ScratchDir scratch("consistency-cli");
  const std::string golden = golden_copy(scratch, "first_prediction_top5.json", "golden.json");
  const std::string forged = golden_copy(scratch, "first_prediction_top5.json", "new.json", forge_candidate_text);
  const CliResult same = genrepro({"diff", golden, golden});
  EXPECT_EQ(same.exit, 0) << same.err;
  EXPECT_EQ(same.err.find("note:"), std::string::npos) << same.err;  // the texts were checked
  const CliResult r = genrepro({"diff", golden, forged});
  EXPECT_EQ(r.exit, 2) << r.out << r.err;
  EXPECT_TRUE(Searches(R"re(^genrepro: error: .*new\.json: runs\[0\]\.steps\[0\]\.top\[0\]\.text: found "<b>X</b>"; allowed: ".*" \(the tokenizer's decode of id \d+\); regenerate it with 'genrepro run')re", r.err))
      << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(ConsistencyCli, WithoutTheTokenizerDiffSaysSoAndStillCatchesTheText) {
  const ScratchDir scratch("consistency-cli");
  EnvGuard no_tokenizer("GENREPRO_TOKENIZER_DIR", std::string("/nonexistent/genrepro-consistency-cli-tokenizer"));
  const std::string golden = golden_copy(scratch, "first_prediction_top5.json", "golden.json");
  const std::string forged = golden_copy(scratch, "first_prediction_top5.json", "new.json", forge_candidate_text);
  const CliResult r = genrepro({"diff", golden, forged});
  EXPECT_EQ(r.exit, 1) << r.out << r.err;
  EXPECT_TRUE(Searches(R"re(regression at new token 1 \(steps\[0\]\).*a token decodes to different text)re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(steps\[0\]\.top\[id=\d+\]\.text)re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(note: .*golden\.json: texts not checked against the tokenizer: .*\nnote: .*new\.json: texts not checked)re", r.err))
      << r.err;
}

// Each verb that reads evidence refuses the same edit with the same line (the layer is in the
// one reader): a greedy token that is not its best candidate.
TEST(ConsistencyCli, EveryReadingVerbRefusesAForgedGreedyToken) {
  const ScratchDir scratch("consistency-cli");
  const auto forge = [](ordered_json& j) {
    ordered_json& run = j["runs"][0];
    const auto other = run["steps"][2]["top"][1]["id"];
    run["output_ids"][2] = other;
    run["steps"][2]["token_id"] = other;
  };
  const std::string golden = golden_copy(scratch, "greedy.json", "golden.json");
  const std::string forged = golden_copy(scratch, "greedy.json", "forged.json", forge);
  const std::string line = R"re(forged\.json: runs\[0\]\.steps\[2\]\.token_id: found \d+; allowed: top\[0\]\.id = \d+ \(a greedy step picks its best candidate\))re";
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"diff", golden, forged},
                                             {"report", forged, "--out", scratch / "report"},
                                             {"merge", forged, "--out", scratch / "merged.json"},
                                             {"bless", forged, "--into", scratch / "golden-dir", "--yes"},
                                             {"check-article", source_path("golden/article/article-facts.json"), forged}}) {
    const CliResult r = genrepro(args);
    EXPECT_EQ(r.exit, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_TRUE(Searches(line, r.err)) << args[0] << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(scratch / "merged.json"));
  EXPECT_FALSE(std::filesystem::exists(scratch / "golden-dir/greedy.json"));
}

}  // namespace
}  // namespace genrepro::test
