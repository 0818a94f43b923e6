// Hostile input, in-process: every case gives one stderr line and exit 2 (or its documented
// success), never exit 3, a hang or a run before the check (the rules: docs/validation.md).
// Evidence edits are made to a copy of hand-made test evidence (tests/cli/data/diff, not goldens).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

using nlohmann::ordered_json;

const std::string kGolden = source_path("tests/cli/data/diff/golden.json");
const std::string kGreedy = source_path("experiments/article/greedy.json");

// Exit 2, exactly one stderr line, matching `regex`. (A hang is ctest's TIMEOUT to catch; how fast
// a refusal is belongs to bench/, not to a correctness test.)
void expect_refused(const std::vector<std::string>& args, const std::string& regex, const CliInput& input = {}) {
  const CliResult r = genrepro(args, input);
  EXPECT_EQ(r.exit, 2) << describe(args, r);
  EXPECT_EQ(nonblank_lines(r.err), 1) << describe(args, r);
  EXPECT_TRUE(regex_search(regex, r.err)) << "stderr does not match " << regex << "\n" << describe(args, r);
}

// golden.json with `edit` applied, written into `dir`.
std::string edited_evidence(const ScratchDir& dir, const std::function<void(ordered_json&)>& edit) {
  ordered_json j = ordered_json::parse(read_bytes(kGolden));
  edit(j);
  return dir.write("new.json", j.dump(1));
}

struct EvidenceEdit {
  std::string name;
  std::function<void(ordered_json&)> edit;
  std::string regex;
};

const std::vector<EvidenceEdit> kEdits = {
    {"candidates_emptied", [](ordered_json& j) { j["runs"][0]["steps"][1]["top"] = ordered_json::array(); },
     R"re(new.json: runs\[0\]\.steps\[1\]\.top: holds 0 candidates; allowed: exactly 2)re"},
    {"candidates_cut_to_one", [](ordered_json& j) { j["runs"][1]["steps"][0]["top"].erase(1); },
     R"re(new.json: runs\[1\]\.steps\[0\]\.top: holds 1 candidates; allowed: exactly 2)re"},
    {"temperature_hot", [](ordered_json& j) { j["runs"][1]["params"]["temperature"] = "hot"; },
     R"re(new.json: runs\[1\]\.params\.temperature = "hot" is not allowed; allowed: a number)re"},
    {"stop_reason_banana", [](ordered_json& j) { j["runs"][0]["stop"]["reason"] = "banana"; },
     R"re(new.json: runs\[0\]\.stop\.reason: expected "eos", "max_new_tokens" or "context_full", found string "banana")re"},
    {"environment_a_number", [](ordered_json& j) { j["environment"] = 7; },
     R"re(new.json: environment: expected an object, found number 7)re"},
    {"prob_out_of_range", [](ordered_json& j) { j["runs"][0]["steps"][0]["prob"] = 3.5; },
     R"re(new.json: runs\[0\]\.steps\[0\]\.prob: found 3.5; allowed: a probability from 0 to 1)re"},
    {"token_id_outside_vocabulary", [](ordered_json& j) { j["runs"][0]["steps"][0]["top"][0]["id"] = 99999; },
     R"re(new.json: runs\[0\]\.steps\[0\]\.top\[0\]\.id: found 99999; allowed: a token id from 0 to 50256)re"},
    {"kept_zero", [](ordered_json& j) { j["runs"][1]["steps"][0]["kept"] = 0; },
     R"re(new.json: runs\[1\]\.steps\[0\]\.kept: found 0; allowed: an integer from 1 to 50257)re"},
    {"steps_skip", [](ordered_json& j) { j["runs"][0]["steps"][1]["step"] = 5; },
     R"re(new.json: runs\[0\]\.steps\[1\]\.step: found 5; allowed: 1)re"},
};

// Every verb that reads evidence refuses it the same way (one reader): diff, bless, merge, report,
// check-article (replay reads GOLDEN through the same read_golden as diff).
class BadEvidence : public ::testing::TestWithParam<EvidenceEdit> {};
TEST_P(BadEvidence, EveryReaderRefusesItWithExit2) {
  ScratchDir dir("validation");
  const std::string bad = edited_evidence(dir, GetParam().edit);
  const std::string regex = "^genrepro: error: .*" + GetParam().regex;
  expect_refused({"diff", kGolden, bad}, regex);
  expect_refused({"diff", bad, kGolden}, regex);
  expect_refused({"bless", bad, "--into", dir / "golden", "--yes"}, regex);
  expect_refused({"merge", bad, "--out", dir / "merged.json"}, regex);
  expect_refused({"report", bad, "--out", dir / "report"}, regex);
  expect_refused({"check-article", source_path("golden/article/article-facts.json"), bad}, regex);
}
INSTANTIATE_TEST_SUITE_P(Validation, BadEvidence, ::testing::ValuesIn(kEdits),
                         [](const auto& info) { return info.param.name; });

TEST(Validation, UneditedTestEvidenceStillAgrees) {
  ScratchDir dir("validation");
  const std::string same = edited_evidence(dir, [](ordered_json&) {});
  const CliResult r = genrepro({"diff", kGolden, same});
  EXPECT_EQ(r.exit, 0) << describe({"diff", kGolden, same}, r);
}

// Flags are checked before any work: these would otherwise load a model and run.
TEST(Validation, FlagsAreCheckedBeforeTheFirstToken) {
  ScratchDir dir("validation");
  expect_refused({"run", kGreedy, "--model", tiny_model(), "--check-equivalence", "--prob-tolerance", "-1"},
                 R"re(^genrepro: error: --prob-tolerance -1: must be a finite number >= 0)re");
  expect_refused({"generate", "--prompt", "x", "--model", tiny_model(), "--threads", "100000"},
                 R"re(^genrepro: error: --threads 100000: allowed: a whole number from 1 to 256)re");
  expect_refused({"run", kGreedy, "--model", tiny_model(), "--threads", "100000", "--out", dir / "e.json"},
                 R"re(^genrepro: error: --threads 100000: allowed: a whole number from 1 to 256)re");
  expect_refused({"replay", kGolden, "--model", tiny_model(), "--threads", "0"},
                 R"re(^genrepro: error: --threads 0: allowed: a whole number from 1 to 256)re");
  expect_refused({"plan", kGreedy, "--model", tiny_model(), "--threads", "100000"},
                 R"re(^genrepro: error: --threads 100000: allowed: a whole number from 1 to 256)re");
  expect_refused({"diff", kGolden, kGolden, "--prob-tolerance", "nan"},
                 R"re(^genrepro: error: --prob-tolerance nan: must be a finite number >= 0)re");
  expect_refused({"generate", "--prompt", "x", "--model", tiny_model(), "--temperature", "1e-38"},
                 R"re(^genrepro: error: --temperature = 1e-38 is not allowed; allowed: 0 \(greedy\) or a number from 1e-30 to 1e\+30)re");
}

// A grid is counted from its lists' lengths before it is expanded: a billion runs is
// refused with its exact count, in milliseconds and without the memory; --max-runs moves the
// limit both ways, across files too.
TEST(Validation, GridsAreCountedBeforeTheyAreExpanded) {
  ScratchDir dir("validation");
  std::string seeds, temperatures;
  for (int i = 1; i <= 1000; ++i) {
    seeds += (i > 1 ? "," : "") + std::to_string(i);
    temperatures += (i > 1 ? "," : "") + std::to_string(1.0 + i / 1000.0);
  }
  const std::string huge = dir.write("huge.json", R"({"name": "huge", "prompts": ["a", "b"], "runs": [{"mode": "sample",
      "seed": [)" + seeds + "], \"temperature\": [" + temperatures + "], \"top_p\": [" + seeds.substr(0, 0) +
                                                   R"(0.5, 0.6, 0.7, 0.8, 0.9]}]})");
  expect_refused({"run", huge, "--model", tiny_model(), "--out", dir / "e.json"},
                 R"re(^genrepro: error: .*huge\.json: runs: expands to 10000000 runs \(prompts x each list's length\), more than --max-runs 100000 allows; .*raise --max-runs \(at most 1000000\))re");
  expect_refused({"plan", huge, "--model", tiny_model()}, R"re(expands to 10000000 runs)re");
  expect_refused({"plan", huge, "--model", tiny_model(), "--max-runs", "1000001"},
                 R"re(^genrepro: error: --max-runs 1000001: allowed: a whole number from 1 to 1000000)re");
  expect_refused({"run", kGreedy, "--model", tiny_model(), "--max-runs", "0", "--out", dir / "e.json"},
                 R"re(^genrepro: error: --max-runs 0: allowed: a whole number from 1 to 1000000)re");
  // Lower: the article's greedy file is one run, so two copies under other names need two.
  const std::string a = dir.write("a.json", R"({"name": "a", "prompts": ["x"], "runs": [{"mode": "greedy"}]})");
  const std::string b = dir.write("b.json", R"({"name": "b", "prompts": ["x", "y"], "runs": [{"mode": "greedy"}]})");
  expect_refused({"plan", a, b, "--model", tiny_model(), "--max-runs", "2"},
                 R"re(b\.json: runs: expands to 2 runs .*more than --max-runs 2 allows after the 1 runs of the files before it)re");
  // A list as long as a 1 MiB file holds is checked for repeats in n log n, so even this is quick
  // (pairwise, 120,000 values took seconds).
  std::string long_list;
  for (int i = 0; i < 120000; ++i) long_list += (i ? "," : "") + std::to_string(i);
  const std::string wide = dir.write("wide.json", R"({"name": "wide", "prompts": ["a", "b"], "runs": [{"mode": "sample", "seed": [)" +
                                                      long_list + "]}]}");
  expect_refused({"plan", wide, "--model", tiny_model()}, R"re(wide\.json: runs: expands to 240000 runs)re");
  const CliResult ok = genrepro({"plan", a, b, "--model", tiny_model(), "--max-runs", "3"});
  EXPECT_EQ(ok.exit, 0) << describe({"plan", a, b, "--max-runs", "3"}, ok);
}

// docs/validation.md, "Writers": a symlink at --out is replaced by the evidence; what it pointed
// to is never written through it.
TEST(Validation, ASymlinkAtOutIsReplacedAndItsTargetKept) {
  ScratchDir dir("validation");
  const std::string target = dir.write("elsewhere.json", "keep me\n");
  std::filesystem::create_symlink(target, dir / "e.json");
  const std::vector<std::string> args = {"run", kGreedy, "--model", tiny_model(), "--out", dir / "e.json"};
  const CliResult r = genrepro(args);
  ASSERT_EQ(r.exit, 0) << describe(args, r);
  EXPECT_FALSE(std::filesystem::is_symlink(dir / "e.json"));
  EXPECT_EQ(ordered_json::parse(read_bytes(dir / "e.json"))["runs"].size(), 1u);
  EXPECT_EQ(read_bytes(target), "keep me\n");
}

TEST(Validation, OutputPathsAreCheckedBeforeTheFirstToken) {
  ScratchDir dir("validation");
  const std::string experiment = dir.write("exp.json", read_bytes(kGreedy));
  expect_refused({"run", experiment, "--model", tiny_model(), "--out", ""}, R"re(^genrepro: error: --out is empty; give a file path)re");
  // Another spelling of the same file: device and inode, not spelling. The experiment is untouched.
  expect_refused({"run", experiment, "--model", tiny_model(), "--out", dir.str() + "/./exp.json"},
                 R"re(^genrepro: error: --out .*/\./exp\.json: is the input .*exp\.json; write the output to another file)re");
  EXPECT_EQ(read_bytes(experiment), read_bytes(kGreedy));
  expect_refused({"merge", kGolden, "--out", kGolden}, R"re(^genrepro: error: --out .*golden\.json: is the input)re");
  expect_refused({"merge", kGolden, "--out", ""}, R"re(^genrepro: error: --out is empty; give a file path)re");
  expect_refused({"diff", kGolden, kGolden, "--junit", kGolden}, R"re(^genrepro: error: --junit .*golden\.json: is the input)re");
  expect_refused({"fixture", "--out", ""}, R"re(^genrepro: error: --out is empty; give a directory path)re");
}

// Streams: /dev/zero ends at once; a FIFO and standard input read like a file.
TEST(Validation, DevZeroIsRefusedAtOnceByEveryReader) {
  const std::string nul = R"re(/dev/zero: byte 0 is NUL: binary data, not a text file)re";
  expect_refused({"diff", kGolden, "/dev/zero"}, nul);
  expect_refused({"run", "/dev/zero", "--model", tiny_model()}, nul);
  expect_refused({"plan", "/dev/zero", "--model", tiny_model()}, nul);
  expect_refused({"check-article", "/dev/zero", kGolden}, nul);
  expect_refused({"tokenize", "--model", tokenizer_dir(), "--input", "/dev/zero"}, R"re(/dev/zero': byte 0 is NUL)re");
  expect_refused({"report", "/dev/zero", "--out", "/tmp/unused-genrepro-report"}, nul);
}

TEST(Validation, AnExperimentFromAFifoPlansLikeTheFile) {
  ScratchDir dir("validation");
  const std::string fifo = dir / "exp.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&fifo] {
    const std::string text = read_bytes(kGreedy);
    const int w = ::open(fifo.c_str(), O_WRONLY);
    (void)!::write(w, text.data(), text.size());
    ::close(w);
  });
  const CliResult from_fifo = genrepro({"plan", fifo, "--model", tiny_model(), "--json"});
  writer.join();
  const CliResult from_file = genrepro({"plan", kGreedy, "--model", tiny_model(), "--json"});
  ASSERT_EQ(from_fifo.exit, 0) << from_fifo.err;
  EXPECT_EQ(from_fifo.out, from_file.out);
}

// "-" is standard input (file descriptor 0 of the process, as `cat e.json | genrepro diff G -`).
TEST(Validation, DashReadsEvidenceFromStandardInput) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string text = read_bytes(kGolden);
  std::thread writer([w = fds[1], &text] {
    (void)!::write(w, text.data(), text.size());
    ::close(w);
  });
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(fds[0], STDIN_FILENO);
  ::close(fds[0]);
  const CliResult r = genrepro({"diff", kGolden, "-"});
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  writer.join();
  EXPECT_EQ(r.exit, 0) << describe({"diff", kGolden, "-"}, r);
}

// A 2^70 token id in the article facts is refused, not wrapped.
TEST(Validation, IntegersThatDoNotFitAreRefused) {
  ScratchDir dir("validation");
  ordered_json facts = ordered_json::parse(read_bytes(source_path("golden/article/article-facts.json")));
  facts["eos"]["token_id"] = ordered_json::parse("1180591620717411303424");
  const std::string path = dir.write("facts.json", facts.dump());
  expect_refused({"check-article", path, source_path("tests/cli/data/article/reproduces.json")},
                 R"re(^genrepro: error: .*facts\.json: eos\.token_id: expected an integer from 0 to 9223372036854775807, found 1\.1805916207174113e\+21)re");
}

}  // namespace
}  // namespace genrepro::test
