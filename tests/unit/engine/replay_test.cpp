// replay on the tiny fixture: evidence made by the runner (the loop) replays with zero drift
// through the same paths; a golden probability moved by a known factor shows exactly that
// drift at that step; a golden token the filters remove is counted outside the kept set (never
// NaN or infinity in the output); other weights, damaged goldens and bad options are refused with
// one line naming the file and field.
#include "engine/replay.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "unit/engine/replay_golden_suite.hpp"

#include "evidence/evidence.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"
#include "engine/runner.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;

// |log(p·e^-d) - log p| computed in double differs from d by a few ulps of log p (~1e-15 for
// |log p| ~ 10); 1e-12 leaves room and still pins the drift to the perturbation.
constexpr double kPerturbationTolerance = 1e-12;
// The perturbation applied to one golden probability, in log space: large against any float32
// drift (~1e-7 here), small enough that p·e^-d stays a probability.
constexpr double kPerturbation = 0.01;

constexpr const char* kExperiment = R"({
  "name": "replay", "prompts": ["the river bank was"], "max_new_tokens": 8, "stop_at_eos": false,
  "runs": [{"mode": "greedy", "use_cache": [false, true]},
           {"mode": "sample", "temperature": 1.0, "top_p": 0.9, "seed": 7, "use_cache": [false, true]},
           {"mode": "sample", "temperature": 0.8, "top_k": 2, "seed": 3},
           {"mode": "sample", "temperature": 1.5, "max_new_tokens": 0}],
  "record": {"top_candidates": 5}
})";

struct ReplayExperiment {
  static constexpr const char* kName = "replay";
  static constexpr const char* kExperiment = genrepro::kExperiment;
};

class Replay : public test::ReplayGoldenSuite<ReplayExperiment> {
 protected:
  static size_t greedy_recompute(const Evidence& e) {
    return run_where(e, [](const RunParams& p) { return p.sampling.mode == DecodeMode::greedy && !p.use_cache; });
  }
  static size_t top_k_run(const Evidence& e) {
    return run_where(e, [](const RunParams& p) { return p.sampling.top_k == 2; });
  }
  // The error reading the golden after `edit` to its JSON, or replaying it.
  static std::string error_of_edited(const std::function<void(OrderedJson&)>& edit) {
    std::ifstream in(*golden_path_);
    const ParsedJson<OrderedJson> parsed = parse_ordered_json_text(std::string(std::istreambuf_iterator<char>(in), {}));
    OrderedJson doc = parsed.value;
    edit(doc);
    const std::string damaged = (*dir_ / "damaged.json").string();
    std::ofstream(damaged) << doc.dump(2);
    try {
      const std::vector<EvidenceFile> g = read_golden(damaged);
      replay_golden(g, options());
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return {};
  }
  static std::string expect_error(const std::vector<EvidenceFile>& g, const ReplayOptions& o) {
    try {
      replay_golden(g, o);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "replay_golden did not throw";
    return {};
  }
};

TEST_F(Replay, SameBuildSamePathsDriftsByExactlyZero) {
  const auto g = golden();
  const ReplayReport report = replay_golden(g, options());
  const std::vector<RunRecord>& runs = g.front().evidence.runs;
  ASSERT_EQ(report.runs.size(), 6u);
  EXPECT_TRUE(report.within());
  EXPECT_EQ(report.logp.max, 0.0);
  EXPECT_EQ(report.logp_unfiltered.max, 0.0);
  EXPECT_EQ(report.logp.infinite, 0);
  EXPECT_TRUE(report.max_run.empty());
  for (size_t i = 0; i < report.runs.size(); ++i) {
    const ReplayRun& r = report.runs[i];
    SCOPED_TRACE(r.id);
    EXPECT_EQ(r.id, runs[i].id);
    EXPECT_EQ(r.use_cache, runs[i].params.use_cache);
    EXPECT_EQ(r.logp.max, 0.0);
    EXPECT_EQ(r.logp.sum, 0.0);
    EXPECT_EQ(r.logp_unfiltered.max, 0.0);
    EXPECT_EQ(r.outside_kept(), 0);
    EXPECT_FALSE(r.own_choice_diverges_at) << "this build picks another token at step " << *r.own_choice_diverges_at;
    if (r.first_prediction) {
      // Every listed candidate compared in the unfiltered distribution; those kept in the final one.
      EXPECT_EQ(r.logp_unfiltered.compared, 5);
      EXPECT_GE(r.logp.compared, 1);
    } else {
      EXPECT_EQ(r.steps, 8);
      EXPECT_EQ(r.logp.compared, 8);
      EXPECT_EQ(r.logp_unfiltered.compared, 8);
    }
  }
}

TEST_F(Replay, ThreadsDoNotChangeTheReport) {
  ReplayOptions o = options();
  o.threads = 3;
  const auto g = golden();
  EXPECT_EQ(replay_to_json(replay_golden(g, o)), replay_to_json(replay_golden(g, options())));
}

// What the KV cache changes numerically: recompute goldens replayed through the cache (and the
// reverse) drift, but by float32 rounding only, far within the tolerance.
TEST_F(Replay, OtherLogitsPathDriftsWithinTolerance) {
  const auto g = golden();
  for (ReplayForward forward : {ReplayForward::cached, ReplayForward::recompute}) {
    ReplayOptions o = options();
    o.forward = forward;
    const ReplayReport report = replay_golden(g, o);
    SCOPED_TRACE(to_string(forward));
    for (const ReplayRun& r : report.runs) EXPECT_EQ(r.use_cache, forward == ReplayForward::cached) << r.id;
    EXPECT_TRUE(report.within()) << replay_summary_line(report);
    EXPECT_LE(report.logp.max, kDefaultLogProbTolerance);
    EXPECT_LE(report.logp_unfiltered.max, kDefaultLogProbTolerance);
    RecordProperty(std::string("max_abs_dlogp_") + to_string(forward), std::to_string(report.logp.max));
    std::cout << "[ measured ] forward " << to_string(forward) << ": " << replay_summary_line(report) << "\n";
  }
}

TEST_F(Replay, PerturbedGoldenProbabilityShowsAsThatDriftAtThatStep) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = greedy_recompute(doc);
  constexpr int64_t kStep = 3;
  double& prob = doc.runs[run].result.steps[kStep].prob;
  prob = prob * std::exp(-kPerturbation);
  const ReplayReport report = replay_golden(g, options());
  const ReplayRun& r = report.runs[run];
  EXPECT_NEAR(r.logp.max, kPerturbation, kPerturbationTolerance);
  ASSERT_TRUE(r.logp.max_step);
  EXPECT_EQ(*r.logp.max_step, kStep);
  EXPECT_EQ(*r.logp.max_token_id, doc.runs[run].result.output_ids[kStep]);
  EXPECT_NEAR(r.logp.mean(), kPerturbation / 8, kPerturbationTolerance);
  EXPECT_EQ(r.logp_unfiltered.max, 0.0);  // prob_t1 untouched
  EXPECT_FALSE(r.within(kDefaultLogProbTolerance));
  EXPECT_TRUE(r.within(2 * kPerturbation));
  EXPECT_EQ(report.beyond_tolerance(), 1u);
  EXPECT_EQ(report.max_run, r.id);
  EXPECT_FALSE(r.own_choice_diverges_at);  // the tokens are the golden's own

  const std::string text = format_replay_text(report);
  EXPECT_NE(text.find(r.id), std::string::npos) << text;
  EXPECT_NE(text.find("BEYOND"), std::string::npos) << text;
  EXPECT_NE(text.find("replay: 6 runs, 5 within tolerance 0.0001, 1 beyond; max |Δ log p| 0.01 (" + r.id + " at new token 4 (steps[3]))"),
            std::string::npos)
      << text;
}

TEST_F(Replay, PerturbedProbT1IsComparedToo) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = top_k_run(doc);
  double& prob_t1 = doc.runs[run].result.steps[5].prob_t1;
  prob_t1 = prob_t1 * std::exp(-kPerturbation);
  const ReplayRun r = replay_golden(g, options()).runs[run];
  EXPECT_EQ(r.logp.max, 0.0);
  EXPECT_NEAR(r.logp_unfiltered.max, kPerturbation, kPerturbationTolerance);
  EXPECT_EQ(*r.logp_unfiltered.max_step, 5);
  EXPECT_FALSE(r.within(kDefaultLogProbTolerance));
}

// top_k = 2: the third candidate by logit has probability 0 in the final distribution. Make it
// the golden token at step 2: replay counts it outside the kept set, and this build's own draw
// (the run's seeded picker) parts from the golden there.
TEST_F(Replay, GoldenTokenOutsideTheKeptSetIsCountedNotInfinite) {
  auto g = golden();
  Evidence& doc = g.front().evidence;
  const size_t run = top_k_run(doc);
  constexpr int64_t kStep = 2;
  StepRecord& step = doc.runs[run].result.steps[kStep];
  ASSERT_EQ(step.top[2].prob, 0.0) << "the fixture's top_k boundary is tied";
  const int64_t filtered = step.top[2].id;
  step.token_id = filtered;
  doc.runs[run].result.output_ids[kStep] = filtered;

  const ReplayReport report = replay_golden(g, options());
  const ReplayRun& r = report.runs[run];
  EXPECT_GE(r.outside_kept(), 1);
  ASSERT_TRUE(r.logp.first_infinite_step);
  EXPECT_EQ(*r.logp.first_infinite_step, kStep);
  ASSERT_TRUE(r.own_choice_diverges_at);
  EXPECT_EQ(*r.own_choice_diverges_at, kStep);
  EXPECT_TRUE(std::isfinite(r.logp.max));
  EXPECT_FALSE(r.within(kDefaultLogProbTolerance));
  EXPECT_FALSE(report.within());
  EXPECT_EQ(report.logp.infinite, r.outside_kept());

  const std::string json = replay_to_json(report).dump();
  EXPECT_EQ(json.find("NaN"), std::string::npos);
  EXPECT_EQ(json.find("nfinity"), std::string::npos);
  EXPECT_EQ(json.find("null,\"first_infinite_step\""), std::string::npos);
  EXPECT_NE(json.find("\"outside_kept\":" + std::to_string(r.outside_kept())), std::string::npos) << json;
  EXPECT_NE(json.find("\"own_choice_diverges_at\":2"), std::string::npos) << json;
}

TEST_F(Replay, OtherWeightsAreRefusedUnlessAllowed) {
  auto g = golden();
  g.front().evidence.model.files["model.safetensors"].sha256 = std::string(64, '0');
  const std::string message = expect_error(g, options());
  EXPECT_NE(message.find(*golden_path_ + " was made with model.safetensors sha256 " + std::string(64, '0') +
                         ", the model replayed has "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("give --model with the golden's weights, or --allow-model-mismatch"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);

  ReplayOptions o = options();
  o.allow_model_mismatch = true;
  std::vector<ModelMismatch> seen;
  o.on_checked = [&](const std::vector<ModelMismatch>& m) { seen = m; };
  const ReplayReport report = replay_golden(g, o);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen.front().golden_sha256, std::string(64, '0'));
  EXPECT_EQ(report.model_mismatches.size(), 1u);
  EXPECT_TRUE(report.within());  // the weights really are the same: only the digest was edited
}

// Damage replay would misread: the structure is the reader's to refuse (read_golden), the rest
// (probabilities, ids against this model) replay's, before the model loads.
TEST_F(Replay, DamagedGoldensAreNamedByFileAndField) {
  const auto damaged = [&](const std::function<void(Evidence&)>& edit) {
    auto g = golden();
    edit(g.front().evidence);
    return expect_error(g, options());
  };
  const std::string prefix = *golden_path_ + ": runs[0].";
  const std::string hint = "; the golden is damaged: bless it again from evidence (genrepro bless)";
  ASSERT_EQ(greedy_recompute(golden().front().evidence), 0u);
  EXPECT_EQ(damaged([](Evidence& e) { e.runs[0].result.steps[1].prob = 1.5; }),
            prefix + "steps[1].prob: found 1.5; allowed: a probability in [0, 1]" + hint);
  EXPECT_EQ(damaged([](Evidence& e) { e.runs[0].result.steps[1].prob_t1 = std::nan(""); }),
            prefix + "steps[1].prob_t1: found nan; allowed: a probability in [0, 1]" + hint);
  EXPECT_EQ(damaged([](Evidence& e) { e.runs[0].result.prompt_ids[0] = 50257; }),
            prefix + "prompt_ids[0] = 50257 is outside this model's vocabulary [0, 50257); replay the golden with the "
                     "model it was made with (--model)");

  const std::string damaged_file = (*dir_ / "damaged.json").string() + ": runs[0].";
  const std::string regenerate = "; regenerate it with 'genrepro run' (format: docs/evidence-format.md)";
  EXPECT_EQ(error_of_edited([](OrderedJson& d) { d["runs"][0]["steps"].erase(7); }),
            damaged_file + "steps: holds 7 steps for 8 output ids; allowed: one step per output id (one step and no ids when "
                           "max_new_tokens is 0)" + regenerate);
  std::string output_4;
  const std::string token_error = error_of_edited([&](OrderedJson& d) {
    d["runs"][0]["steps"][4]["token_id"] = 11;
    output_4 = d["runs"][0]["output_ids"][4].dump();
  });
  EXPECT_EQ(token_error, damaged_file + "steps[4].token_id: found 11; allowed: output_ids[4] = " + output_4 + regenerate);
  EXPECT_EQ(error_of_edited([](OrderedJson& d) { d["runs"][0]["steps"][0]["prob"] = "high"; }),
            damaged_file + "steps[0].prob: expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), found string \"high\"" +
                regenerate);
}

TEST_F(Replay, BadOptionsAreUsageErrors) {
  ReplayOptions o = options();
  o.logprob_tolerance = -1;
  EXPECT_EQ(expect_error(golden(), o), "--logprob-tolerance -1: must be a finite number >= 0 (|Δ log p| allowed per step)");
  o = options();
  o.threads = 0;
  EXPECT_EQ(expect_error(golden(), o),
            "--threads 0: allowed: a whole number from 1 to 256 (runs replayed at once, one intra-op thread each)");
  try {
    parse_replay_forward("kv");
    ADD_FAILURE() << "parse_replay_forward accepted kv";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--forward kv: allowed: as-run (each run's own use_cache), recompute or cached");
  }
}

}  // namespace
}  // namespace genrepro
