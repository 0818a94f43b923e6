// genrepro replay: evidence of tests/cli/data/replay/small.json made on the tiny fixture replays
// with exit 0 (same build, same paths); one step's prob changed -> exit 1 naming the run; another
// model's weights, bad flags, a missing file -> exit 2 with one line. Strict evidence replays on
// the strict forward, bit for bit; a GOLDEN mixing it with other numerics is refused.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

// Far beyond the default log-prob tolerance (1e-4): -log(0.9) = 0.105.
constexpr double kProbFactor = 0.9;
constexpr int kTamperedStep = 2;

// The evidence every case replays, made once per process (SetUpTestSuite), with two damaged
// copies: tampered_prob.json (every probability of runs[0].steps[2] times 0.9) and other_model.json
// (model.safetensors' sha256 replaced by 64 zeros).
// A tampered step the reader still accepts: every probability of it scaled alike, and the values
// derived from them (margin, rest_mass) recomputed, so only replay's recomputation can tell.
void scale_step_probabilities(nlohmann::json& step, double factor) {
  for (const char* key : {"prob", "prob_t1", "margin"}) step[key] = step[key].get<double>() * factor;
  double listed = 0;
  for (nlohmann::json& c : step["top"]) {
    c["prob"] = c["prob"].get<double>() * factor;
    c["prob_scaled"] = c["prob_scaled"].get<double>() * factor;
    listed += c["prob_scaled"].get<double>();
  }
  step["rest_mass"] = 1 - listed;
}

class Replay : public ::testing::TestWithParam<CliCase> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("replay");
    // Reference numerics: the replay's libtorch forward paths, and the mixed GOLDEN's other half.
    const std::vector<std::string> args = {"run", source_path("tests/cli/data/replay/small.json"), "--model", tiny_model(),
                                           "--numerics", "reference", "--out", *dir_ / "evidence.json"};
    const CliResult made = genrepro(args);
    ASSERT_EQ(made.exit, 0) << describe(args, made);
    ASSERT_TRUE(Searches(R"re(wrote .*evidence.json \(5 runs\))re", made.out));
    const nlohmann::json evidence = nlohmann::json::parse(read_bytes(*dir_ / "evidence.json"));
    nlohmann::json tampered = evidence;
    scale_step_probabilities(tampered["runs"][0]["steps"][kTamperedStep], kProbFactor);
    dir_->write("tampered_prob.json", tampered.dump(2));
    // One step's logits digest changed (a valid digest of other logits): the replay's
    // own logits no longer hash to it, while every probability still agrees.
    nlohmann::json digest = evidence;
    digest["runs"][0]["steps"][kTamperedStep]["logits_digest"] = "xxh64:0000000000000000";
    dir_->write("tampered_digest.json", digest.dump(2));
    // The same runs in strict numerics; and a directory of strict and reference evidence.
    std::vector<std::string> strict_args = args;
    strict_args.back() = *dir_ / "strict.json";
    *std::find(strict_args.begin(), strict_args.end(), "reference") = "strict";
    const CliResult strict = genrepro(strict_args);
    ASSERT_EQ(strict.exit, 0) << describe(strict_args, strict);
    // Golden files must not share run ids: the strict file beside the reference one holds the
    // article's greedy run.
    dir_->write("mixed/reference.json", read_bytes(*dir_ / "evidence.json"));
    const std::vector<std::string> greedy_args = {"run", source_path("experiments/article/greedy.json"), "--model", tiny_model(),
                                                  "--numerics", "strict", "--out", *dir_ / "mixed/strict.json"};
    const CliResult greedy = genrepro(greedy_args);
    ASSERT_EQ(greedy.exit, 0) << describe(greedy_args, greedy);
    nlohmann::json other = evidence;
    other["model"]["files"]["model.safetensors"]["sha256"] = std::string(64, '0');
    dir_->write("other_model.json", other.dump(2));
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // "{replay}" in an argument is the directory of the evidence above.
  static std::vector<std::string> resolve(std::vector<std::string> args) {
    for (std::string& a : args)
      if (a.rfind("{replay}", 0) == 0) a = dir_->str() + a.substr(std::string("{replay}").size());
    return args;
  }
  static ScratchDir* dir_;
};
ScratchDir* Replay::dir_ = nullptr;

TEST_P(Replay, ExitAndReport) {
  const std::vector<std::string> args = resolve(GetParam().args);
  expect_result(GetParam(), args, genrepro(args));
}

const std::string kModel = tiny_model();

const std::vector<CliCase> kCases = {
    {"agrees", {"replay", "{replay}/evidence.json", "--model", kModel}, 0,
     R"re(replay_small/p0/greedy-[0-9a-f]+ +recompute +6 +0 +- +0 +0 +0 +same +ok\n.*replay_small/p0/sample-t2[-a-z0-9]* +recompute +5 top .* ok\nlogits: 5 of 5 runs bit-identical to the golden at every step \(digests\)\nreplay: 5 runs, 5 within tolerance 0.0001, 0 beyond)re",
     R"re(^model: )re"},
    {"json", {"replay", "{replay}/evidence.json", "--model", kModel, "--json", "--forward", "cached", "--threads", "2"}, 0,
     R"re("schema": "genrepro.replay/1",\n  "within": true,.*"forward": "cached")re", ""},
    {"tampered_prob", {"replay", "{replay}/tampered_prob.json", "--model", kModel}, 1,
     R"re(replay_small/p0/greedy-[0-9a-f]+ +recompute +6 +0.105 +3 .* BEYOND\n.*replay: 5 runs, 4 within tolerance 0.0001, 1 beyond)re",
     ""},
    {"tampered_digest", {"replay", "{replay}/tampered_digest.json", "--model", kModel}, 0,
     R"re(\nlogits: 4 of 5 runs bit-identical to the golden at every step \(digests\); 1 differs \(first: replay_small/p0/greedy-[0-9a-f]+ from new token 3 \(steps\[2\]\)\)\nreplay: 5 runs, 5 within tolerance)re",
     ""},
    {"tampered_digest_json", {"replay", "{replay}/tampered_digest.json", "--model", kModel, "--json"}, 0,
     R"re("logits_digests": \{\n\s+"compared": 6,\n\s+"equal": 5,\n\s+"first_difference": 2\n)re", ""},
    {"tampered_prob_looser_tolerance", {"replay", "{replay}/tampered_prob.json", "--model", kModel, "--logprob-tolerance", "0.2"},
     0, R"re(5 within tolerance 0.2)re", ""},
    {"model_mismatch", {"replay", "{replay}/other_model.json", "--model", kModel}, 2, "",
     R"re(other_model.json was made with model.safetensors sha256 0+, the model replayed has [0-9a-f]+.*--allow-model-mismatch to replay anyway)re",
     Stderr::one_line},
    {"model_mismatch_allowed", {"replay", "{replay}/other_model.json", "--model", kModel, "--allow-model-mismatch"}, 0,
     R"re(5 within tolerance)re", R"re(genrepro: warning: .*other_model.json was made with model.safetensors sha256 0+)re"},
    // Strict evidence replays on the strict forward: every digest equal, through either logits path.
    {"strict_agrees", {"replay", "{replay}/strict.json", "--model", kModel}, 0,
     R"re(^replay of 1 golden file\(s\) against .* \(forward as-run in strict numerics, .*\nlogits: 5 of 5 runs bit-identical to the golden at every step \(digests\)\nreplay: 5 runs, 5 within tolerance)re",
     ""},
    {"strict_other_path", {"replay", "{replay}/strict.json", "--model", kModel, "--forward", "cached", "--json"}, 0,
     R"re("forward": "cached",\n  "numerics": "strict",.*"logits_digests": \{\n\s+"compared": ([1-9][0-9]*),\n\s+"equal": \1,)re", ""},
    {"strict_mixed", {"replay", "{replay}/mixed", "--model", kModel}, 2, "",
     R"re(reference.json: numerics.mode reference beside .*strict.json's strict: .*replay the strict and the other evidence separately)re",
     Stderr::one_line},
    {"bad_missing_file", {"replay", "{replay}/nope.json"}, 2, "", R"re(nope.json: no such file)re", Stderr::one_line},
    {"bad_tolerance", {"replay", "{replay}/evidence.json", "--model", kModel, "--logprob-tolerance", "-1"}, 2, "",
     R"re(--logprob-tolerance -1: must be a finite number >= 0)re", Stderr::one_line},
    {"bad_forward", {"replay", "{replay}/evidence.json", "--model", kModel, "--forward", "kv"}, 2, "",
     R"re(--forward kv: allowed: as-run)re", Stderr::one_line},
};
INSTANTIATE_TEST_SUITE_P(Replay, Replay, ::testing::ValuesIn(kCases), CaseName{});

}  // namespace
}  // namespace genrepro::test
