// The CLI's conventions: `help VERB` is `VERB --help`; typed placeholders in help;
// generate's prompt from a file or standard input (bounded like every reader) and its
// llama.cpp-style aliases, which must give the very same ids as the long flags; and one rule for
// output files' missing parent directories in every verb that writes: they are created.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;

TEST(HelpVerb, IsTheVerbsOwnHelp) {
  for (const std::string verb : {"diff", "generate", "bless", "run", "replay"}) {
    SCOPED_TRACE(verb);
    const CliResult help = genrepro({"help", verb});
    const CliResult flag = genrepro({verb, "--help"});
    EXPECT_EQ(help.exit, 0) << help.err;
    EXPECT_EQ(help.out, flag.out);
    EXPECT_TRUE(Searches("Usage: .*" + verb, help.out)) << help.out;
    EXPECT_EQ(help.err, "");
  }
  const CliResult all = genrepro({"help"});
  EXPECT_EQ(all.exit, 0);
  EXPECT_EQ(all.out, genrepro({"--help"}).out);
  EXPECT_TRUE(Searches(R"re('genrepro help VERB' is 'genrepro VERB --help')re", all.out));
  expect_case({"help_unknown_verb", {"help", "dif"}, 2, "", R"re('dif' is not a verb; did you mean 'diff'\?)re", Stderr::one_line});
}

// Placeholders say what a value is: --seed is an unsigned 64-bit integer, not TEXT.
TEST(HelpVerb, PlaceholdersAreTyped) {
  const std::string generate = genrepro({"generate", "--help"}).out;
  EXPECT_TRUE(Searches(R"re(--seed UINT64)re", generate)) << generate;
  EXPECT_TRUE(Searches(R"re(--prompt-file PATH)re", generate)) << generate;
  EXPECT_TRUE(Searches(R"re(--temperature,--temp FLOAT)re", generate)) << generate;
  const std::string diff = genrepro({"diff", "--help"}).out;
  EXPECT_TRUE(Searches(R"re(--junit PATH)re", diff)) << diff;
  EXPECT_TRUE(Searches(R"re(--pair-by KEY,\.\.\.)re", diff)) << diff;
  EXPECT_TRUE(Searches(R"re(--prob-tolerance FLOAT)re", diff)) << diff;
  EXPECT_TRUE(Searches(R"re(--out PATH)re", genrepro({"run", "--help"}).out));
  EXPECT_TRUE(Searches(R"re(--model DIR)re", generate)) << generate;
  EXPECT_TRUE(Searches(R"re(--golden PATH)re", genrepro({"report", "--help"}).out));
  // The KV-cache defaults differ, and both helps say so.
  EXPECT_TRUE(Searches(R"re(experiment files default to use_cache)re", generate));
  EXPECT_TRUE(Searches(R"re(generate uses the KV cache)re", genrepro({"run", "--help"}).out));
}

std::vector<std::string> ids_of(const std::vector<std::string>& prompt_args, const CliInput& input = {}) {
  std::vector<std::string> args = {"generate", "--model", tiny_model(), "--ids", "--max-new-tokens", "4"};
  args.insert(args.end(), prompt_args.begin(), prompt_args.end());
  const CliResult r = genrepro(args, input);
  EXPECT_EQ(r.exit, 0) << r.err;
  return {r.out};
}

// The prompt from a file or from standard input is the same prompt: the same ids.
TEST(GeneratePrompt, FileAndStdinGiveTheSameIdsAsTheFlag) {
  ScratchDir scratch("prompt");
  const std::string file = scratch.write("prompt.txt", "the river bank was");
  const auto flag = ids_of({"--prompt", "the river bank was"});
  EXPECT_EQ(ids_of({"--prompt-file", file}), flag);
  EXPECT_EQ(ids_of({"--prompt", "-"}, {"the river bank was"}), flag);
  // A trailing newline is part of the prompt: other tokens, so a different continuation can follow.
  const CliResult nl = genrepro({"generate", "--model", tiny_model(), "--prompt", "-", "--ids", "-n", "1"}, {"the river bank was\n"});
  EXPECT_EQ(nl.exit, 0) << nl.err;
}

TEST(GeneratePrompt, BadPromptSourcesAreOneLine) {
  ScratchDir scratch("prompt");
  const std::string empty = scratch.write("empty.txt", "");
  const std::string binary = scratch.write("nul.txt", std::string("a\0b", 3));
  const std::vector<CliCase> cases = {
      {"no_prompt", {"generate", "--max-new-tokens", "1"}, 2, "",
       R"re(give the text to continue: --prompt TEXT, --prompt - \(standard input\) or --prompt-file PATH)re", Stderr::one_line},
      {"both", {"generate", "--prompt", "x", "--prompt-file", empty}, 2, "", R"re(--prompt and --prompt-file both give the prompt; give one)re",
       Stderr::one_line},
      {"missing_file", {"generate", "--prompt-file", scratch / "nope.txt"}, 2, "",
       R"re(--prompt-file .*nope.txt: no such file; give a text file of at most 1 MiB holding the prompt)re", Stderr::one_line},
      {"empty_file", {"generate", "--prompt-file", empty}, 2, "", R"re(--prompt-file .*empty.txt: empty; the prompt must hold at least one character)re",
       Stderr::one_line},
      {"binary_file", {"generate", "--prompt-file", binary}, 2, "", R"re(--prompt-file .*nul.txt: .*NUL)re", Stderr::one_line},
  };
  for (const CliCase& c : cases) {
    SCOPED_TRACE(c.name);
    expect_case(c);
  }
  // Standard input is bounded like every reader: 1 MiB and one byte is refused, not read on.
  const CliResult big = genrepro({"generate", "--prompt", "-"}, {std::string((std::size_t(1) << 20) + 1, 'a')});
  EXPECT_EQ(big.exit, 2);
  EXPECT_TRUE(Searches(R"re(--prompt -: .*1048576)re", big.err)) << big.err;
}

// -p, -n, -s, --temp are the long flags under llama.cpp's names: the same sampled ids.
TEST(GenerateAliases, LlamaCppSpellingsGiveTheSameRun) {
  const std::vector<std::string> base = {"generate", "--model", tiny_model(), "--ids"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = genrepro(args);
    EXPECT_EQ(r.exit, 0) << r.err;
    return r.out;
  };
  const std::string long_flags =
      with({"--prompt", "the river bank was", "--max-new-tokens", "4", "--seed", "7", "--temperature", "1.3", "--top-k", "40", "--top-p", "0.9"});
  EXPECT_EQ(with({"-p", "the river bank was", "-n", "4", "-s", "7", "--temp", "1.3", "--top-k", "40", "--top-p", "0.9"}), long_flags);
  // And the seed matters, so the comparison above could fail.
  EXPECT_NE(with({"-p", "the river bank was", "-n", "4", "-s", "8", "--temp", "1.3", "--top-k", "40", "--top-p", "0.9"}), long_flags);
}

// Every verb that writes a file creates the missing directories on its way (docs/ci.md).
TEST(OutputPaths, MissingParentDirectoriesAreCreatedInEveryVerb) {
  ScratchDir scratch("outputs");
  const std::string golden = source_path("tests/cli/data/diff/golden.json");
  const std::string same = source_path("tests/cli/data/diff/same.json");
  ScratchDir experiment_dir("outputs-spec");
  const std::string spec = experiment_dir.write(
      "tiny.json", R"({"name": "tiny", "prompts": ["the river bank was"], "max_new_tokens": 1, "runs": [{"mode": "greedy"}]})");
  struct Writes {
    std::vector<std::string> args;
    std::string made;
  };
  const std::vector<Writes> verbs = {
      {{"run", spec, "--model", tiny_model(), "--out", scratch / "run/a/b/evidence.json"}, scratch / "run/a/b/evidence.json"},
      // The run's evidence is a shard of one: merge joins it alone.
      {{"merge", scratch / "run/a/b/evidence.json", "--out", scratch / "merge/a/b/merged.json"}, scratch / "merge/a/b/merged.json"},
      {{"diff", golden, same, "--junit", scratch / "diff/a/b/junit.xml"}, scratch / "diff/a/b/junit.xml"},
      {{"bless", golden, "--into", scratch / "bless/a/b", "--yes"}, scratch / "bless/a/b/greedy.json"},
      {{"report", golden, "--out", scratch / "report/a/b"}, scratch / "report/a/b/report.html"},
  };
  for (const Writes& w : verbs) {
    SCOPED_TRACE(w.args.front());
    const CliResult r = genrepro(w.args);
    EXPECT_EQ(r.exit, 0) << r.out << r.err;
    EXPECT_TRUE(fs::is_regular_file(w.made)) << w.made;
  }
}

// A file where a directory must be cannot be made into one: refused before any work, exit 2.
TEST(OutputPaths, AFileOnTheWayIsRefusedInOneLine) {
  ScratchDir scratch("outputs");
  const std::string file = scratch.write("plain.txt", "x");
  const std::string golden = source_path("tests/cli/data/diff/golden.json");
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"merge", golden, "--out", file + "/merged.json"},
           {"diff", golden, golden, "--junit", file + "/junit.xml"},
       }) {
    SCOPED_TRACE(args.front());
    const CliResult r = genrepro(args);
    EXPECT_EQ(r.exit, 2) << r.out;
    EXPECT_TRUE(Searches(R"re(plain.txt is not a directory; give a path inside a directory)re", r.err)) << r.err;
  }
}

}  // namespace
}  // namespace genrepro::test
