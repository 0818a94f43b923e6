// Experiment files' shorter ways to write inputs: a seed range {"from": F, "count": N} is the
// list F..F+N-1 (the same runs and ids as the list written out), and "prompts_file" reads the
// prompts from text lines or JSON lines beside the experiment file, recording the file's
// checksum in the spec the evidence keeps. Bad input: one line naming file, field, value, allowed.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "support/scratch_dir.hpp"
#include "util/errors.hpp"
#include "util/sha256.hpp"

namespace genrepro {
namespace {

std::vector<std::string> ids_of(const ExperimentSpec& s) {
  std::vector<std::string> ids;
  for (const ExpandedRun& r : s.runs) ids.push_back(r.id);
  return ids;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << "expected a SpecError";
  return {};
}

std::string with_seed(const std::string& seed) {
  return R"({"name": "s", "prompts": ["the river bank was"], "runs": [{"mode": "sample", "top_p": 0.9, "seed": )" + seed + "}]}";
}

TEST(SeedRange, TheSameRunsAndIdsAsTheListWrittenOut) {
  const ExperimentSpec list = parse_experiment(with_seed("[1, 2, 3, 4, 5]"), "x.json");
  const ExperimentSpec range = parse_experiment(with_seed(R"({"from": 1, "count": 5})"), "x.json");
  ASSERT_EQ(range.runs.size(), 5u);
  EXPECT_EQ(ids_of(range), ids_of(list));
  EXPECT_EQ(range.runs[4].params.sampling.seed, 5u);
  EXPECT_TRUE(range.spec["runs"][0]["seed"].is_object()) << "the spec as written is what the evidence records";
  // A range of one.
  EXPECT_EQ(ids_of(parse_experiment(with_seed(R"({"from": 3, "count": 1})"), "x.json")),
            std::vector<std::string>{list.runs[2].id});
  // Re-expanding the recorded spec (merge, bless, the reader) gives the same ids.
  EXPECT_EQ(ids_of(parse_experiment(range.spec.dump(), "e.json: experiments[].spec")), ids_of(list));
}

TEST(SeedRange, BadRangesAreOneLineNamingTheField) {
  const auto bad = [](const std::string& seed) { return error_of([&] { parse_experiment(with_seed(seed), "x.json"); }); };
  EXPECT_EQ(bad(R"({"from": 1, "count": 0})"),
            "x.json: runs[0].seed.count = 0 is not allowed; allowed: an integer from 1 to 1000000 (the seeds from, from+1, ..., "
            "from+count-1)");
  EXPECT_NE(bad(R"({"from": 1, "count": 2000000})").find("runs[0].seed.count = 2000000 is not allowed"), std::string::npos);
  EXPECT_NE(bad(R"({"from": 1, "count": 2.5})").find("runs[0].seed.count = 2.5 is not allowed"), std::string::npos);
  EXPECT_NE(bad(R"({"from": -1, "count": 2})").find("runs[0].seed.from = -1 is not allowed; allowed: a non-negative integer"),
            std::string::npos);
  EXPECT_NE(bad(R"({"from": 18446744073709551615, "count": 2})").find("runs[0].seed.count = 2 is not allowed; allowed: at most 2^64 - from"),
            std::string::npos);
  EXPECT_NE(bad(R"({"count": 2})").find("x.json: runs[0].seed: a seed range needs \"from\", e.g. \"seed\": {\"from\": 1, \"count\": 20}"),
            std::string::npos);
  EXPECT_NE(bad(R"({"from": 1, "count": 2, "step": 2})").find("x.json: runs[0].seed.step: unknown key; a seed range has \"from\" and \"count\""),
            std::string::npos);
}

class PromptsFile : public ::testing::Test {
 protected:
  std::string experiment(const std::string& prompts_file, const std::string& name = "exp.json") {
    return scratch_.write(name, R"({"name": "pf", "prompts_file": ")" + prompts_file +
                                    R"(", "max_new_tokens": 2, "runs": [{"mode": "greedy"}]})");
  }
  test::ScratchDir scratch_{"prompts-file"};
};

TEST_F(PromptsFile, TextLinesBesideTheExperimentFileAreItsPrompts) {
  const std::string text = "the river bank was\r\n\nonce upon a time\n";
  scratch_.write("data/prompts.txt", text);
  const ExperimentSpec s = load_experiment(experiment("data/prompts.txt"));
  EXPECT_EQ(s.prompts, (std::vector<std::string>{"the river bank was", "once upon a time"}));
  // The same ids as the prompts written in the file itself.
  const ExperimentSpec inline_spec = parse_experiment(
      R"({"name": "pf", "prompts": ["the river bank was", "once upon a time"], "max_new_tokens": 2, "runs": [{"mode": "greedy"}]})", "x.json");
  EXPECT_EQ(ids_of(s), ids_of(inline_spec));
  // The recorded spec holds the prompts and the file's checksum, and re-expands where the file is not.
  EXPECT_EQ(s.spec["prompts_file"]["path"], "data/prompts.txt");
  EXPECT_EQ(s.spec["prompts_file"]["sha256"], sha256_hex(text));
  EXPECT_EQ(s.spec["prompts_file"]["bytes"], text.size());
  EXPECT_EQ(s.spec["prompts"].size(), 2u);
  EXPECT_EQ(ids_of(parse_experiment(s.spec.dump(), "/nowhere/e.json: experiments[].spec")), ids_of(s));
}

TEST_F(PromptsFile, JsonLinesTakeTheTextField) {
  scratch_.write("prompts.jsonl", "{\"text\": \"the river bank was\", \"id\": 1}\n{\"text\": \"once upon a time\"}\n");
  const ExperimentSpec s = load_experiment(experiment("prompts.jsonl"));
  EXPECT_EQ(s.prompts, (std::vector<std::string>{"the river bank was", "once upon a time"}));
}

TEST_F(PromptsFile, BadFilesAreOneLineNamingFileLineAndFix) {
  const std::string exp = scratch_ / "exp.json";
  EXPECT_NE(error_of([&] { load_experiment(experiment("missing.txt")); }).find(exp + ": prompts_file = \"missing.txt\" (" + scratch_.str() + "/missing.txt): no such file"),
            std::string::npos);
  scratch_.write("bad.jsonl", "{\"text\": \"a\"}\n{\"prompt\": \"b\"}\n");
  EXPECT_NE(error_of([&] { load_experiment(experiment("bad.jsonl")); })
                .find(exp + ": prompts_file " + scratch_.str() + "/bad.jsonl:2 = \"{\\\"prompt\\\": \\\"b\\\"}\" is not allowed; allowed: a JSON object with a non-empty string \"text\""),
            std::string::npos);
  scratch_.write("twice.txt", "a\nb\na\n");
  EXPECT_NE(error_of([&] { load_experiment(experiment("twice.txt")); }).find("twice.txt:3: repeats the prompt of line 1; list each prompt once"),
            std::string::npos);
  scratch_.write("empty.txt", "\n \n");
  EXPECT_NE(error_of([&] { load_experiment(experiment("empty.txt")); }).find("empty.txt: holds no prompt"), std::string::npos);
  scratch_.write("both.json", R"({"name": "pf", "prompts": ["x"], "prompts_file": "a.txt", "runs": [{"mode": "greedy"}]})");
  EXPECT_NE(error_of([&] { load_experiment(scratch_ / "both.json"); }).find("prompts_file: given together with prompts; give one of them"),
            std::string::npos);
  scratch_.write("latin1.txt", "caf\xe9\n");
  EXPECT_NE(error_of([&] { load_experiment(experiment("latin1.txt")); }).find("latin1.txt: byte 3 is not UTF-8"), std::string::npos);
}

}  // namespace
}  // namespace genrepro
