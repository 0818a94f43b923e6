// The article's own PyTorch sampling loop against `genrepro generate --ids --no-cache`: on the tiny
// fixture, T = 1, p = 0.9, seeds 41/42/43 (the article's three runs), --rng torch and --rng
// portable must pick exactly the tokens tests/reference/article_sampling.py picked. ctest runs
// this suite alone as reference.article_sampled_loop, after the Python side has written its ids
// (fixture reference.article_sampled_loop.python) to $GENREPRO_ARTICLE_LOOP_IDS.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

TEST(ArticleSampledLoop, GenerateMatchesTheArticlesPythonLoop) {
  const char* path = std::getenv("GENREPRO_ARTICLE_LOOP_IDS");
  if (path == nullptr) GTEST_SKIP() << "GENREPRO_ARTICLE_LOOP_IDS is not set (ctest sets it: reference.article_sampled_loop)";
  const nlohmann::json reference = nlohmann::json::parse(read_bytes(path));
  ASSERT_EQ(reference["runs"].size(), 3u);
  int compared = 0;
  for (const nlohmann::json& run : reference["runs"]) {
    const auto python_ids = run["ids"].get<std::vector<int64_t>>();
    ASSERT_FALSE(python_ids.empty());
    for (const std::string rng : {"torch", "portable"}) {
      const std::vector<std::string> args = {
          "generate", "--model", tiny_model(), "--prompt", reference["prompt"].get<std::string>(), "--ids", "--no-cache",
          "--temperature", "1", "--top-p", "0.9", "--seed", std::to_string(run["seed"].get<int64_t>()), "--rng", rng,
          "--max-new-tokens", std::to_string(reference["max_new_tokens"].get<int64_t>())};
      const CliResult r = genrepro(args);
      ASSERT_EQ(r.exit, 0) << describe(args, r);
      const auto cpp_ids = nlohmann::json::parse(r.out).get<std::vector<int64_t>>();
      size_t first = 0;
      while (first < cpp_ids.size() && first < python_ids.size() && cpp_ids[first] == python_ids[first]) ++first;
      EXPECT_EQ(cpp_ids, python_ids) << "seed " << run["seed"] << " rng " << rng << ": first difference at new token "
                                     << first << " (lengths " << cpp_ids.size() << " vs " << python_ids.size() << ")";
      compared += static_cast<int>(python_ids.size());
    }
  }
  EXPECT_EQ(compared, 2 * 3 * reference["max_new_tokens"].get<int>()) << "a run stopped early; the article's three runs do not";
}

}  // namespace
}  // namespace genrepro::test
