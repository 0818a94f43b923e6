// Input rules closed for the class, in every verb that takes the input: values finite as a double
// but not in float32's arithmetic (controls, biases), error lines that stay one short line
// whatever value or path they quote, diff refusing 0-run evidence as bless and replay do, plan
// estimating with run's threads and with the prompts' own bytes, check-article counting only runs
// that ran the article's loop.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "evidence/environment.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

const std::string kGolden = source_path("golden/fixture/greedy.json");

void expect_one_line_refusal(const std::vector<std::string>& args, const std::string& regex, const CliInput& input = {}) {
  const CliResult r = genrepro(args, input);
  EXPECT_EQ(r.exit, 2) << describe(args, r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(args, r);
  EXPECT_LE(r.err.size(), 1100u) << describe(args, r);
  EXPECT_TRUE(Searches(regex, r.err)) << describe(args, r);
}

std::string hf_greedy(const ScratchDir& dir, const std::string& controls, const std::string& name = "hf.json") {
  return dir.write(name, R"({"name": "h", "prompts": ["the river bank was"], "max_new_tokens": 2,
                              "runs": [{"mode": "greedy", "framework": "hf", )" + controls + R"(}], "record": {"top_candidates": 2}})");
}

// ---- float32's edges, where the value enters: experiment files (plan, run), flags (generate), --params (sample) ----

TEST(Float32Edges, APenaltyOrBiasFloat32CannotCarryIsRefusedInEveryVerb) {
  ScratchDir dir("f32");
  const std::vector<std::string> model = {"--model", tiny_model()};
  struct Case {
    std::string controls, flag, flag_value, regex;
  };
  const std::vector<Case> cases = {
      {R"("repetition_penalty": 1e-38)", "--repetition-penalty", "1e-38", R"re(repetition.penalty = 1e-38 is not allowed; allowed: a number from 1e-30 to 1e\+30)re"},
      {R"("sequence_bias": [[[262], 1e300]])", "--sequence-bias", "[[[262], 1e300]]", R"re(sequence.bias = .*1e\+?300.* is not allowed; allowed: each bias from -1e\+30 to 1e\+30)re"},
  };
  for (const Case& c : cases) {
    const std::string exp = hf_greedy(dir, c.controls);
    for (const char* verb : {"plan", "run"}) {
      std::vector<std::string> args = {verb, exp, "--model", tiny_model()};
      if (std::string(verb) == "run") args.insert(args.end(), {"--out", dir / "e.json"});
      expect_one_line_refusal(args, c.regex);
    }
    EXPECT_FALSE(fs::exists(dir / "e.json"));
    expect_one_line_refusal({"generate", "--model", tiny_model(), "--prompt", "the river bank was", "--max-new-tokens", "2",
                             "--framework", "hf", "--greedy", c.flag, c.flag_value},
                            c.regex);
    const std::string params = R"({"mode": "greedy", "framework": "hf", )" + c.controls + "}";
    expect_one_line_refusal({"sample", "-", "--params", params}, c.regex, CliInput{"[0.5, 1.5, -0.25, 1.0]\n"});
  }
  // llama.cpp's: a penalty and a bias past float32's range; -Infinity stays "never".
  expect_one_line_refusal({"sample", "-", "--params", R"({"mode": "sample", "seed": 1, "framework": "llama.cpp", "presence_penalty": -1e300})"},
                          R"re(presence_penalty = -1e\+300 is not allowed; allowed: a number from -1e\+30 to 1e\+30)re",
                          CliInput{"[0.5, 1.5, -0.25, 1.0]\n"});
  expect_one_line_refusal({"sample", "-", "--params", R"({"mode": "sample", "seed": 1, "framework": "llama.cpp", "logit_bias": [[1, 1e300]]})"},
                          R"re(logit_bias = .* is not allowed; allowed: each bias from -1e\+30 to 1e\+30)re", CliInput{"[0.5, 1.5, -0.25, 1.0]\n"});
  const CliResult never = genrepro({"sample", "-", "--params", R"({"mode": "sample", "seed": 1, "framework": "llama.cpp", "logit_bias": [[1, false]]})"},
                                   CliInput{"[0.5, 1.5, -0.25, 1.0]\n"});
  EXPECT_EQ(never.exit, 0) << never.err;
  // The bounds themselves are values.
  const CliResult edge = genrepro({"plan", hf_greedy(dir, R"("repetition_penalty": 1e-30, "sequence_bias": [[[262], -1e30]])"), "--model", tiny_model()});
  EXPECT_EQ(edge.exit, 0) << edge.err;
}

// ---- one short line, whatever the value ----

TEST(OneLine, AMultiLineOrHugeValueOrPathStaysOneShortLine) {
  ScratchDir dir("one-line");
  const std::vector<std::string> gen = {"generate", "--model", tiny_model(), "--prompt", "x", "--framework", "hf", "--greedy"};
  std::vector<std::string> args = gen;
  args.insert(args.end(), {"--sequence-bias", "[\n  [[262],\n   1e300]\n]"});
  expect_one_line_refusal(args, R"re(sequence.bias)re");
  std::string huge = "[";
  for (int i = 0; i < 3000; ++i) huge += std::string(i ? ", " : "") + "[[" + std::to_string(i + 1) + "], 1e300]";
  huge += "]";
  args = gen;
  args.insert(args.end(), {"--sequence-bias", huge});
  expect_one_line_refusal(args, R"re(sequence.bias)re");
  const std::string exp = hf_greedy(dir, R"("sequence_bias": )" + huge);
  expect_one_line_refusal({"plan", exp, "--model", tiny_model()}, R"re(hf\.json: .*sequence_bias = .*… \([0-9]+ bytes\) is not allowed)re");
  expect_one_line_refusal({"diff", dir / "no\nsuch\nfile.json", kGolden}, R"re(no\\nsuch\\nfile\.json)re");
  expect_one_line_refusal({"plan", source_path("experiments/article/greedy.json"), "--model", dir / "model\ndir"}, R"re(model\\ndir)re");
}

TEST(OneLine, AnEmptyLlamaCppOrderNamesLlamaCppsStages) {
  ScratchDir dir("llama-order");
  const std::string exp = dir.write("l.json", R"({"name": "l", "prompts": ["a"], "max_new_tokens": 1,
                                                  "runs": [{"mode": "sample", "seed": 1, "framework": "llama.cpp", "sampler_order": []}]})");
  expect_one_line_refusal({"plan", exp, "--model", tiny_model()},
                          R"re(sampler_order = \[\] is not allowed; allowed: .*framework llama\.cpp: the seven stages \{penalties, top_n_sigma, top_k, typical_p, top_p, min_p, temperature\} in any order)re");
}

// ---- agree only over data that are there ----

TEST(DiffOfNothing, EvidenceWithoutRunsIsRefusedOnEitherSide) {
  ScratchDir dir("zero");
  ordered_json j = ordered_json::parse(read_bytes(kGolden));
  j["runs"] = ordered_json::array();
  const std::string empty = dir.write("empty.json", j.dump(1));
  expect_one_line_refusal({"diff", kGolden, empty}, R"re(empty\.json: holds no runs; there is nothing to compare)re");
  expect_one_line_refusal({"diff", empty, kGolden}, R"re(empty\.json: holds no runs; there is nothing to compare against)re");
  expect_one_line_refusal({"diff", kGolden, empty, "--json"}, R"re(holds no runs)re");
}

// ---- plan sees what run will do ----

TEST(PlanEstimate, UsesTheThreadsRunUses) {
  const CliResult r = genrepro({"plan", source_path("experiments/article/greedy.json"), "--model", tiny_model(), "--json"});
  ASSERT_EQ(r.exit, 0) << r.err;
  EXPECT_EQ(ordered_json::parse(r.out)["total"]["threads"].get<int>(), default_threads());
  const CliResult text = genrepro({"plan", source_path("experiments/article/greedy.json"), "--model", tiny_model(), "--threads", "1"});
  EXPECT_NE(text.out.find(" s on 1 thread "), std::string::npos) << text.out;
}

TEST(PlanEstimate, TheEvidenceBoundHoldsForLongPromptsOfEscapedText) {
  ScratchDir dir("prompt-bytes");
  // Control characters are written as \u00XX: six bytes of evidence for each byte of prompt.
  const std::string text(100, '\x01');
  ordered_json prompts = ordered_json::array();
  for (int i = 0; i < 4; ++i) prompts.push_back(text + std::to_string(i));
  ordered_json seeds = ordered_json::array();
  for (int s = 0; s < 6; ++s) seeds.push_back(s);
  const ordered_json spec = {{"name", "long"}, {"prompts", prompts}, {"max_new_tokens", 1}, {"use_cache", true},
                             {"runs", ordered_json::array({{{"mode", "sample"}, {"seed", seeds}}})}, {"record", {{"top_candidates", 0}}}};
  const std::string exp = dir.write("long.json", spec.dump());
  const CliResult plan = genrepro({"plan", exp, "--model", tiny_model(), "--json"});
  ASSERT_EQ(plan.exit, 0) << plan.err;
  const auto bound = ordered_json::parse(plan.out)["total"]["evidence_bytes_at_most"].get<uint64_t>();
  const CliResult run = genrepro({"run", exp, "--model", tiny_model(), "--out", dir / "e.json", "--threads", "1"});
  ASSERT_EQ(run.exit, 0) << run.err;
  EXPECT_GE(bound, fs::file_size(dir / "e.json"));
}

// ---- check-article: the article's greedy run is the argmax of the model's logits ----

TEST(CheckArticle, AFrameworkGreedyRunWithAPenaltyIsNotTheArticlesGreedyRun) {
  ScratchDir dir("article-greedy");
  const std::string facts = source_path("golden/article/article-facts.json");
  const std::string exp = dir.write("g.json", R"({"name": "greedy", "prompts": ["the river bank was"], "max_new_tokens": 50,
      "stop_at_eos": false, "runs": [{"mode": "greedy", "framework": "hf", "repetition_penalty": 1.3}], "record": {"top_candidates": 5}})");
  ASSERT_EQ(genrepro({"run", exp, "--model", tiny_model(), "--out", dir / "e.json"}).exit, 0);
  const CliResult r = genrepro({"check-article", facts, dir / "e.json", "--json"});
  ASSERT_EQ(r.exit, 1) << r.err;
  const ordered_json doc = ordered_json::parse(r.out);
  bool looked = false;
  for (const auto& fact : doc["facts"]) {
    if (fact.dump().find("greedy") == std::string::npos) continue;
    looked = true;
    EXPECT_EQ(fact["status"], "missing") << fact.dump();
  }
  EXPECT_TRUE(looked) << r.out;
}

}  // namespace
}  // namespace genrepro::test
