// generate --json: the run as one JSON object in evidence terms (ids, each step's token, text
// piece, probability and top candidates), the same tokens as plain generate; --stream gives JSON
// lines, one step each, then the run without its steps.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

using nlohmann::json;

TEST(GenerateJson, OneObjectInEvidenceTermsWithTheTokensOfPlainGenerate) {
  const std::vector<std::string> base = {"generate", "the river bank was", "-n", "6", "--model", tiny_model(),
                                         "--temperature", "1", "--top-p", "0.9", "--seed", "43"};
  std::vector<std::string> ids_args = base;
  ids_args.push_back("--ids");
  const CliResult ids = genrepro(ids_args);
  ASSERT_EQ(ids.exit, 0) << ids.err;
  std::vector<std::string> json_args = base;
  json_args.push_back("--json");
  const CliResult r = genrepro(json_args);
  ASSERT_EQ(r.exit, 0) << r.err;
  const json j = json::parse(r.out);  // exactly one object
  EXPECT_EQ(j["schema"], "genrepro.generate/1");
  EXPECT_EQ(j["output_ids"], json::parse(ids.out));
  EXPECT_EQ(j["prompt"], "the river bank was");
  EXPECT_EQ(j["prompt_ids"], json({1169, 7850, 3331, 373}));
  EXPECT_EQ(j["params"]["seed"], 43);
  EXPECT_EQ(j["params"]["use_cache"], true) << "generate's default, the KV cache";
  EXPECT_TRUE(j["model"].contains("files")) << "the model block, checksums included";
  ASSERT_EQ(j["steps"].size(), 6u);
  std::string pieces;
  for (const json& s : j["steps"]) {
    EXPECT_TRUE(s.contains("token_id") && s.contains("token_text") && s.contains("prob") && s.contains("top")) << s.dump();
    EXPECT_EQ(s["top"].size(), 5u);
    pieces += s["token_text"].get<std::string>();
  }
  EXPECT_EQ(j["continuation"], pieces);
  EXPECT_EQ(j["text"], "the river bank was" + pieces);

  // --stream: JSON lines, the steps in order, then the run without its steps.
  json_args.push_back("--stream");
  const CliResult lines = genrepro(json_args);
  ASSERT_EQ(lines.exit, 0) << lines.err;
  std::istringstream in(lines.out);
  std::vector<json> got;
  for (std::string line; std::getline(in, line);) got.push_back(json::parse(line));
  ASSERT_EQ(got.size(), 7u) << lines.out;
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(got[k], j["steps"][k]);
  EXPECT_FALSE(got[6].contains("steps"));
  EXPECT_EQ(got[6]["output_ids"], j["output_ids"]);
}

TEST(GenerateJson, GreedyAndAFrameworkRunToo) {
  const CliResult greedy = genrepro({"generate", "the river bank was", "-n", "3", "--model", tiny_model(), "--json"});
  ASSERT_EQ(greedy.exit, 0) << greedy.err;
  EXPECT_EQ(json::parse(greedy.out)["params"]["mode"], "greedy");
  const CliResult llama = genrepro({"generate", "the river bank was", "-n", "3", "--model", tiny_model(), "--framework", "llama.cpp",
                                    "--temp", "0.7", "-s", "42", "--json"});
  ASSERT_EQ(llama.exit, 0) << llama.err;
  EXPECT_EQ(json::parse(llama.out)["params"]["framework"], "llama.cpp");
}

TEST(GenerateJson, NotWithIds) {
  const CliResult r = genrepro({"generate", "x", "--model", tiny_model(), "--json", "--ids"});
  EXPECT_EQ(r.exit, 2);
  EXPECT_EQ(r.err, "genrepro: error: --json cannot be combined with --ids (--json holds the ids; give one of them)\n");
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace genrepro::test
