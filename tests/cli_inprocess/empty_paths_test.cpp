// An empty path is refused in every verb (cli/flag_kinds.hpp refuse_empty_paths): a CI line such
// as `report ev.json --golden "$GOLDEN"` with the variable unset must be exit 2 naming the flag,
// never a report that silently leaves out its verdict.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

TEST(EmptyPaths, EveryPathFlagRefusesAnEmptyValueNamingIt) {
  const std::string golden = source_path("golden/fixture/greedy.json");
  const std::string facts = source_path("golden/article/article-facts.json");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"report", golden, "--golden", ""}, "--golden is empty; give a file path"},
      {{"report", golden, "--out", ""}, "--out is empty; give a directory path"},
      {{"diff", golden, golden, "--sensitivity", ""}, "--sensitivity is empty; give a file path"},
      {{"diff", golden, golden, "--junit", ""}, "--junit is empty; give a file path"},
      {{"check-article", facts, golden, "--golden", ""}, "--golden is empty; give a file path"},
      {{"run", source_path("experiments/article/greedy.json"), "--out", ""}, "--out is empty; give a file path"},
      {{"generate", "--prompt", "x", "--model", ""}, "--model is empty; give a directory path"},
      {{"generate", "--prompt-file", ""}, "--prompt-file is empty; give a file path"},
  };
  for (const auto& [args, message] : cases) {
    const ScratchDir dir("empty-paths");
    const CliResult r = genrepro(args);
    EXPECT_EQ(r.exit, 2) << args[0] << " " << args[args.size() - 2];
    EXPECT_EQ(r.err.rfind("genrepro: error: " + message, 0), 0u) << r.err;
    EXPECT_EQ(r.out, "") << args[0];
  }
  // The control: the same report with the golden given writes its verdict.
  const ScratchDir dir("empty-paths");
  const CliResult ok = genrepro({"report", golden, "--golden", golden, "--out", dir / "r"});
  EXPECT_EQ(ok.exit, 0) << ok.err;
}

}  // namespace
}  // namespace genrepro::test
