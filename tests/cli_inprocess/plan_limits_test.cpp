// What `run` would write is checked before work starts, in `plan`, `run` and `generate`
// alike. Each bad case is one edit of a real file (an article experiment, the tiny fixture's
// config.json and weights via make_broken_models.py) with a control that the unedited file passes.
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

using nlohmann::ordered_json;

const std::string kGreedy = source_path("experiments/article/greedy.json");
const std::string kTemperature = source_path("experiments/article/temperature.json");

// `experiment` with `edit` applied, written into `dir` as exp.json.
std::string edited(const ScratchDir& dir, const std::string& experiment, const std::function<void(ordered_json&)>& edit) {
  ordered_json j = ordered_json::parse(read_bytes(experiment));
  edit(j);
  return dir.write("exp.json", j.dump(2));
}

void expect_exit2_line(const std::vector<std::string>& args, const std::string& regex) {
  const CliResult r = genrepro(args);
  EXPECT_EQ(r.exit, 2) << describe(args, r);
  EXPECT_TRUE(Searches(regex, r.err)) << describe(args, r);
}

// ---- the evidence size, estimated before work starts ----

// 50 tokens x 50257 candidates is about 465 MB of evidence, past the 64 MiB every reader accepts.
TEST(EvidenceSize, AllCandidatesOfFiftyTokensIsRefusedInPlanAndRun) {
  ScratchDir dir("size");
  const std::string exp = edited(dir, kGreedy, [](ordered_json& j) { j["record"]["top_candidates"] = 50257; });
  const std::string line =
      R"re(genrepro: error: the evidence of these 1 runs would be about 46[0-9]{7} bytes \(4[0-9]{2}\.[0-9] MiB: 50 steps at most, 2512850 candidates of record\.top_candidates\), more than the 64\.0 MiB every evidence reader \(and --resume\) accepts; record fewer candidates \(--top-candidates N\) or split the runs \(--shard I/[0-9]+ or more shards\)\n$)re";
  expect_exit2_line({"plan", exp, "--model", tiny_model()}, line);
  expect_bad_input_keeps_out({"run", exp, "--model", tiny_model()}, line);
  // run --top-candidates is the fix the message names: the same file then runs.
  const CliResult fixed = genrepro({"run", exp, "--model", tiny_model(), "--top-candidates", "5", "--out", dir / "e.json"});
  EXPECT_EQ(fixed.exit, 0) << fixed.err;
}

TEST(EvidenceSize, TheUneditedExperimentPlansAndSaysItsSize) {
  const CliResult r = genrepro({"plan", kGreedy, "--model", tiny_model()});
  EXPECT_EQ(r.exit, 0) << r.err;
  // The golden of this experiment is 74,225 bytes; the estimate errs high, within 2x.
  EXPECT_TRUE(Searches(R"re(evidence of 0\.1 MB at most)re", r.out)) << r.out;
  const CliResult j = genrepro({"plan", kGreedy, "--model", tiny_model(), "--json"});
  ASSERT_EQ(j.exit, 0) << j.err;
  const auto bytes = ordered_json::parse(j.out)["total"]["evidence_bytes_at_most"].get<uint64_t>();
  EXPECT_GE(bytes, 74225u);
  EXPECT_LE(bytes, 2 * 74225u);
}

// The estimate is of the shard run would execute: the fix it names works.
TEST(EvidenceSize, ASmallerShardFits) {
  ScratchDir dir("size-shard");
  const std::string exp = edited(dir, kTemperature, [](ordered_json& j) {
    ordered_json seeds = ordered_json::array();
    for (int s = 0; s < 30; ++s) seeds.push_back(s);
    j["runs"][0]["seed"] = seeds;
    j["record"]["top_candidates"] = 100;
  });
  // 3 temperatures x 30 seeds = 90 runs x 50 steps x 100 candidates = 83 MB: refused whole,
  expect_exit2_line({"plan", exp, "--model", tiny_model()}, R"re(the evidence of these 90 runs would be about)re");
  // and half of it fits.
  const CliResult half = genrepro({"plan", exp, "--model", tiny_model(), "--shard", "1/2"});
  EXPECT_EQ(half.exit, 0) << half.err;
}

// ---- the model against its tokenizer, before work starts ----

TEST(VocabAgreement, ASmallerVocabSizeIsRefusedInPlanGenerateAndRun) {
  const std::string line =
      R"re(^genrepro: error: .*/vocab_1000/config\.json: vocab_size = 1000 is less than the 50257 ids of .*vocab\.json \(largest id 50256\); allowed: at least 50257 \(a larger, padded vocab_size is fine\); the weights and the tokenizer are from different models\n$)re";
  expect_exit2_line({"plan", kGreedy, "--model", broken_model("vocab_1000")}, line);
  expect_exit2_line({"generate", "--prompt", "x", "--model", broken_model("vocab_1000")}, line);
  expect_bad_input_keeps_out({"run", kGreedy, "--model", broken_model("vocab_1000")}, line);
  // Control: the unedited fixture plans.
  EXPECT_EQ(genrepro({"plan", kGreedy, "--model", tiny_model()}).exit, 0);
}

// nanoGPT's padding (50304 for 50257 tokens) is accepted, and its 47 extra ids are never picked
// nor counted: the padded rows are 40x copies of real ones, yet every token and probability is the
// unpadded fixture's, greedy and sampled.
// The article's greedy, sampled and first-prediction experiments, their runs cut to 16 new tokens:
// every step is compared, and 16 of them show the head's padded ids never drawn nor counted as well
// as 50 (the recompute loop's cost grows with the square of the length).
TEST(VocabAgreement, APaddedVocabularyGivesTheUnpaddedEvidence) {
  for (const char* experiment : {"greedy", "temperature", "first_prediction_top5"}) {
    ScratchDir dir("padded");
    const std::string exp = edited(dir, source_path(std::string("experiments/article/") + experiment + ".json"), [](ordered_json& j) {
      if (j.value("max_new_tokens", 0) > 16) j["max_new_tokens"] = 16;
    });
    const CliResult plain = genrepro({"run", exp, "--model", tiny_model(), "--out", dir / "plain.json"});
    ASSERT_EQ(plain.exit, 0) << plain.err;
    const CliResult padded = genrepro({"run", exp, "--model", broken_model("vocab_padded_50304"), "--out", dir / "padded.json"});
    ASSERT_EQ(padded.exit, 0) << padded.err;
    const ordered_json a = ordered_json::parse(read_bytes(dir / "plain.json"));
    const ordered_json b = ordered_json::parse(read_bytes(dir / "padded.json"));
    ASSERT_EQ(a["runs"].size(), b["runs"].size());
    for (size_t i = 0; i < a["runs"].size(); ++i) {
      EXPECT_EQ(a["runs"][i]["id"], b["runs"][i]["id"]);
      EXPECT_EQ(a["runs"][i]["output_ids"], b["runs"][i]["output_ids"]) << experiment << " run " << i;
      EXPECT_EQ(a["runs"][i]["steps"], b["runs"][i]["steps"]) << experiment << " run " << i;
      for (const auto& step : b["runs"][i]["steps"])
        for (const auto& c : step["top"]) EXPECT_LT(c["id"].get<int64_t>(), 50257);
    }
  }
  const CliResult plan = genrepro({"plan", kGreedy, "--model", broken_model("vocab_padded_50304")});
  EXPECT_EQ(plan.exit, 0) << plan.err;
}

// ---- numbers that underflow, as written in an experiment file ----

TEST(Underflow, TemperatureAndTopPBelowTheSmallestDoubleAreRefusedNamingTheWrittenValue) {
  for (const char* key : {"temperature", "top_p"}) {
    for (const char* written : {"1e-400", "2e-324", "-1e-999"}) {
      ScratchDir dir("underflow");
      ordered_json j = ordered_json::parse(read_bytes(kTemperature));
      j["runs"][0][key] = 0.25;  // a placeholder, replaced as text so the file holds `written`
      if (std::string(key) == "top_p") j["runs"][0]["sampler_order"] = {"temperature", "top_p"};
      std::string text = j.dump(2);
      text.replace(text.find("0.25"), 4, written);
      const std::string exp = dir.write("exp.json", text);
      expect_exit2_line({"plan", exp, "--model", tiny_model()},
                        std::string(R"re(^genrepro: error: .*exp\.json: line [0-9]+, column [0-9]+: the number )re") + written +
                            R"re( is too small for a double \(it would be read as 0\); write 0, or a number whose magnitude is at least 4\.9406564584124654e-324\n$)re");
      // Control: the same file with a normal number plans.
      text.replace(text.find(written), std::string(written).size(), "0.25");
      dir.write("exp.json", text);
      const CliResult ok = genrepro({"plan", exp, "--model", tiny_model()});
      EXPECT_EQ(ok.exit, 0) << ok.err;
    }
  }
}

TEST(Underflow, RealFlagsRefuseUnderflowAndHex) {
  expect_exit2_line({"generate", "--prompt", "x", "--temperature", "1e-400"},
                    R"re(^genrepro: error: --temperature 1e-400: the number 1e-400 is too small for a double)re");
  expect_exit2_line({"generate", "--prompt", "x", "--top-p", "1e-400"}, R"re(^genrepro: error: --top-p 1e-400: the number 1e-400)re");
  expect_exit2_line({"generate", "--prompt", "x", "--top-p", "0x1p-2"},
                    R"re(^genrepro: error: --top-p 0x1p-2: allowed: a decimal number \(hexadecimal is not read\)\n$)re");
}

}  // namespace
}  // namespace genrepro::test
