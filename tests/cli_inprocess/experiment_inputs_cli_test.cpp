// run with a prompts file and a seed range: the evidence holds the same run ids as the prompts
// and seeds written out, records the prompts file's checksum, and reads back (its spec
// re-expands without the file); a bad prompts file or range is exit 2, one line, --out untouched.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "util/sha256.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<std::string> ids(const std::string& evidence) {
  std::vector<std::string> out;
  const json doc = json::parse(read_bytes(evidence));
  for (const json& r : doc["runs"]) out.push_back(r["id"]);
  return out;
}

TEST(ExperimentInputsCli, PromptsFileAndSeedRangeGiveTheIdsOfTheListsWrittenOut) {
  ScratchDir scratch("experiment-inputs");
  const std::string prompts = "the river bank was\nonce upon a time\n";
  scratch.write("data/prompts.txt", prompts);
  const std::string by_file = scratch.write(
      "by-file.json", R"({"name": "inputs", "prompts_file": "data/prompts.txt", "max_new_tokens": 1,
                         "runs": [{"mode": "sample", "top_p": 0.9, "seed": {"from": 7, "count": 2}}]})");
  const std::string by_list = scratch.write(
      "by-list.json", R"({"name": "inputs", "prompts": ["the river bank was", "once upon a time"], "max_new_tokens": 1,
                         "runs": [{"mode": "sample", "top_p": 0.9, "seed": [7, 8]}]})");
  const std::string a = scratch / "a.json", b = scratch / "b.json";
  // Run from another directory: the prompts file is found beside the experiment file.
  const CliResult ra = genrepro({"run", by_file, "--model", tiny_model(), "--out", a});
  ASSERT_EQ(ra.exit, 0) << ra.err;
  const CliResult rb = genrepro({"run", by_list, "--model", tiny_model(), "--out", b});
  ASSERT_EQ(rb.exit, 0) << rb.err;
  EXPECT_EQ(ids(a).size(), 4u);
  EXPECT_EQ(ids(a), ids(b));
  const json spec = json::parse(read_bytes(a))["experiments"][0]["spec"];
  EXPECT_EQ(spec["prompts_file"], json({{"path", "data/prompts.txt"}, {"sha256", sha256_hex(prompts)}, {"bytes", prompts.size()}}));
  EXPECT_EQ(spec["runs"][0]["seed"], json({{"from", 7}, {"count", 2}}));
  // The evidence reads back and diffs clean against the list's, with the prompts file gone.
  fs::remove(scratch / "data/prompts.txt");
  const CliResult d = genrepro({"diff", b, a});
  EXPECT_EQ(d.exit, 0) << d.out << d.err;
}

TEST(ExperimentInputsCli, BadPromptsFileOrRangeIsOneLineAndKeepsOut) {
  ScratchDir scratch("experiment-inputs-bad");
  const std::string missing = scratch.write(
      "missing.json", R"({"name": "m", "prompts_file": "nowhere.txt", "runs": [{"mode": "greedy"}]})");
  expect_bad_input_keeps_out({"run", missing, "--model", tiny_model()}, R"re(missing\.json: prompts_file = "nowhere\.txt" \(.*nowhere\.txt\): no such file)re");
  const std::string range = scratch.write(
      "range.json", R"({"name": "r", "prompts": ["x"], "runs": [{"mode": "sample", "seed": {"from": 1, "count": 0}}]})");
  expect_bad_input_keeps_out({"run", range, "--model", tiny_model()}, R"re(range\.json: runs\[0\]\.seed\.count = 0 is not allowed; allowed: an integer from 1 to 1000000)re");
}

}  // namespace
}  // namespace genrepro::test
