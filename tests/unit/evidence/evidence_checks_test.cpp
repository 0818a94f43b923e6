// The meaning of evidence (evidence_checks.cpp, docs/validation.md): each case edits one value of
// valid evidence the way the hostile pass did (candidate lists emptied or cut, a stop reason
// "banana", a temperature "hot", ids outside the vocabulary, probabilities outside [0, 1], ...)
// and asserts the one-line message: the file, the JSON path, the value and what is allowed.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;

// A greedy run of three steps and a sampled one that stopped at EOS.
OrderedJson valid_json() {
  std::vector<StepRecord> sampled = {test::make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 40),
                                     test::make_step(1, 50256, {{50256, 0.5}, {21, 0.2}}, 7)};
  RunRecord eos = make_run("s", DecodeMode::sample, sampled);
  eos.result.stop_reason = StopReason::eos;
  Evidence e = make_evidence({make_run("g", DecodeMode::greedy, greedy_steps()), eos});
  test::make_consistent(e);  // the reader holds ids and grid points to the writer's rules too
  return evidence_to_json(e);
}

struct Case {
  std::string name;
  std::function<void(OrderedJson&)> edit;
  std::string message;  // the whole line after "e.json: ", up to the fix
};

std::string error_after(const std::function<void(OrderedJson&)>& edit) {
  OrderedJson j = valid_json();
  edit(j);
  try {
    evidence_from_json(j, "e.json");
  } catch (const EvidenceError& e) {
    return e.what();
  }
  return "(no error)";
}

OrderedJson& step(OrderedJson& j, int run, int k) { return j["runs"][run]["steps"][k]; }

const std::vector<Case> kCases = {
    // The hostile pass's first finding: diff said "agree" about these.
    {"candidates_emptied", [](OrderedJson& j) { step(j, 0, 1)["top"] = OrderedJson::array(); },
     "runs[0].steps[1].top: holds 0 candidates; allowed: exactly 2 (params.top_candidates = 2, at most model.config.vocab_size)"},
    {"candidates_cut_to_one", [](OrderedJson& j) { step(j, 0, 0)["top"].erase(1); },
     "runs[0].steps[0].top: holds 1 candidates; allowed: exactly 2 (params.top_candidates = 2, at most model.config.vocab_size)"},
    // Types and enums: bad input, not "differ".
    {"stop_reason_banana", [](OrderedJson& j) { j["runs"][0]["stop"]["reason"] = "banana"; },
     "runs[0].stop.reason: expected \"eos\", \"max_new_tokens\" or \"context_full\", found string \"banana\""},
    {"temperature_hot", [](OrderedJson& j) { j["runs"][1]["params"]["temperature"] = "hot"; },
     "runs[1].params.temperature = \"hot\" is not allowed; allowed: a number"},
    {"environment_a_number", [](OrderedJson& j) { j["environment"] = 3; }, "environment: expected an object, found number 3"},
    {"mode_unknown", [](OrderedJson& j) { j["runs"][0]["params"]["mode"] = "beam"; },
     "runs[0].params.mode = \"beam\" is not allowed; allowed: \"greedy\" or \"sample\""},
    {"rule_unknown", [](OrderedJson& j) { j["runs"][0]["params"]["top_p_rule"] = "nucleus"; },
     "runs[0].params.top_p_rule = nucleus is not allowed; allowed: one of {article, hf}"},
    {"sampler_unknown", [](OrderedJson& j) { j["runs"][0]["params"]["sampler_order"][0] = "min_p"; },
     "runs[0].params.sampler_order = min_p is not allowed"},
    {"vendor_unknown", [](OrderedJson& j) { j["environment"]["blas"]["vendor"] = "acme"; },
     "environment.blas.vendor: found \"acme\"; allowed: one of \"blis\", \"mkl\", \"none\", \"openblas\", \"reference\", \"unknown\""},
    {"model_source_unknown", [](OrderedJson& j) { j["model"]["source"] = "s3"; },
     "model.source: found \"s3\"; allowed: one of \"env\", \"fixture\", \"hf-cache\", \"hf-dir\""},
    // Parameter ranges: the experiment files' rules.
    {"temperature_too_small_for_float32", [](OrderedJson& j) { j["runs"][1]["params"]["temperature"] = 1e-38; },
     "runs[1].params.temperature: found 1e-38; allowed: 0 (greedy) or a number from 1e-30 to 1e+30"},
    {"top_p_above_one", [](OrderedJson& j) { j["runs"][1]["params"]["top_p"] = 7; },
     "runs[1].params.top_p: found 7; allowed: a number in (0, 1] (1 turns top-p off)"},
    {"top_candidates_negative", [](OrderedJson& j) { j["runs"][0]["params"]["top_candidates"] = -3; },
     "runs[0].params.top_candidates: found -3; allowed: an integer >= 0"},
    // The vocabulary.
    {"vocab_size_missing", [](OrderedJson& j) { j["model"]["config"].erase("vocab_size"); },
     "model.config.vocab_size: missing; allowed: an integer from 1 to 16777216"},
    {"vocab_size_negative", [](OrderedJson& j) { j["model"]["config"]["vocab_size"] = -5; },
     "model.config.vocab_size: found -5; allowed: an integer from 1 to 16777216"},
    {"output_id_outside_vocabulary", [](OrderedJson& j) {
       j["runs"][0]["output_ids"][2] = 50257;
       step(j, 0, 2)["token_id"] = 50257;
     },
     "runs[0].output_ids[2]: found 50257; allowed: a token id from 0 to 50256 (model.config.vocab_size is 50257)"},
    {"prompt_id_negative", [](OrderedJson& j) { j["runs"][0]["prompt_ids"][0] = -1; },
     "runs[0].prompt_ids[0]: found -1; allowed: a token id from 0 to 50256"},
    {"candidate_id_outside_vocabulary", [](OrderedJson& j) { step(j, 0, 0)["top"][1]["id"] = 1 << 30; },
     "runs[0].steps[0].top[1].id: found 1073741824; allowed: a token id from 0 to 50256"},
    {"eos_id_outside_vocabulary", [](OrderedJson& j) { j["model"]["eos_token_id"] = 60000; },
     "model.eos_token_id: found 60000; allowed: a token id from 0 to 50256"},
    // Probabilities and the other step values.
    {"prob_above_one", [](OrderedJson& j) { step(j, 0, 0)["prob"] = 1.5; },
     "runs[0].steps[0].prob: found 1.5; allowed: a probability from 0 to 1"},
    {"prob_nan", [](OrderedJson& j) { step(j, 0, 0)["prob_t1"] = "NaN"; },
     "runs[0].steps[0].prob_t1: found \"NaN\"; allowed: a probability from 0 to 1"},
    {"candidate_prob_negative", [](OrderedJson& j) { step(j, 1, 1)["top"][0]["prob_scaled"] = -0.25; },
     "runs[1].steps[1].top[0].prob_scaled: found -0.25; allowed: a probability from 0 to 1"},
    {"rest_mass_infinite", [](OrderedJson& j) { step(j, 0, 0)["rest_mass"] = "Infinity"; },
     "runs[0].steps[0].rest_mass: found \"Infinity\"; allowed: a number from 0 to 1"},
    {"logit_margin_negative", [](OrderedJson& j) { step(j, 0, 0)["logit_margin"] = -1; },
     "runs[0].steps[0].logit_margin: found -1.0; allowed: a finite number >= 0"},
    {"entropy_beyond_log_v", [](OrderedJson& j) { step(j, 0, 0)["entropy"] = 99; },
     "runs[0].steps[0].entropy: found 99.0; allowed: a number from 0 to log(vocab_size)"},
    // kept.
    {"kept_zero", [](OrderedJson& j) { step(j, 1, 0)["kept"] = 0; },
     "runs[1].steps[0].kept: found 0; allowed: an integer from 1 to 50257 (model.config.vocab_size)"},
    {"kept_beyond_vocabulary", [](OrderedJson& j) { step(j, 1, 0)["kept"] = 50258; },
     "runs[1].steps[0].kept: found 50258; allowed: an integer from 1 to 50257"},
    {"kept_greedy_many", [](OrderedJson& j) { step(j, 0, 0)["kept"] = 3; },
     "runs[0].steps[0].kept: found 3; allowed: 1 (params.mode is \"greedy\")"},
    // Structure between fields.
    {"steps_not_consecutive", [](OrderedJson& j) { step(j, 0, 2)["step"] = 3; },
     "runs[0].steps[2].step: found 3; allowed: 2 (steps are numbered 0, 1, 2, ... in order)"},
    {"output_ids_not_the_steps", [](OrderedJson& j) { j["runs"][0]["output_ids"][1] = 21; },
     "runs[0].steps[1].token_id: found 20; allowed: output_ids[1] = 21"},
    {"more_output_than_the_cap", [](OrderedJson& j) { j["runs"][0]["params"]["max_new_tokens"] = 2; },
     "runs[0].output_ids: holds 3 ids; allowed: at most params.max_new_tokens = 2"},
    {"eos_without_eos_token", [](OrderedJson& j) { j["runs"][0]["stop"]["reason"] = "eos"; },
     "runs[0].stop.reason: found \"eos\" but the last output id is 30; allowed: \"eos\" only when the last output id is "
     "model.eos_token_id = 50256"},
    {"max_new_tokens_stop_too_early", [](OrderedJson& j) {
       j["runs"][1]["stop"]["reason"] = "max_new_tokens";
       j["runs"][1]["params"]["max_new_tokens"] = 3;
     },
     "runs[1].stop.reason: found \"max_new_tokens\" after 2 tokens; allowed: \"max_new_tokens\" only after "
     "params.max_new_tokens = 3 tokens"},
    {"threads_zero", [](OrderedJson& j) { j["environment"]["threads"]["intra_op"] = 0; },
     "environment.threads.intra_op: found 0; allowed: an integer >= 1"},
    {"timing_negative", [](OrderedJson& j) { j["runs"][0]["timing"]["seconds"] = -1; },
     "runs[0].timing.seconds: found -1.0; allowed: a finite number >= 0"},
};

class EvidenceChecks : public ::testing::TestWithParam<Case> {};

TEST_P(EvidenceChecks, RefusesWithOneLineNamingFilePathAndValue) {
  const std::string what = error_after(GetParam().edit);
  EXPECT_EQ(what.rfind("e.json: " + GetParam().message, 0), 0u) << what;
  EXPECT_EQ(what.find('\n'), std::string::npos) << what;
}

INSTANTIATE_TEST_SUITE_P(Evidence, EvidenceChecks, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return info.param.name; });

TEST(EvidenceChecks, TheBaselineIsValid) { EXPECT_EQ(error_after([](OrderedJson&) {}), "(no error)"); }

// top_candidates beyond the vocabulary lists the whole vocabulary: min(top_candidates, V).
TEST(EvidenceChecks, CandidateListsAreAtMostTheVocabulary) {
  const std::string what = error_after([](OrderedJson& j) {
    j["model"]["config"]["vocab_size"] = 2;
    j["model"]["eos_token_id"] = 1;
    for (OrderedJson& run : j["runs"]) {
      run["params"]["top_candidates"] = 1000;
      run["prompt_ids"] = {0, 1};
    }
  });
  // The first thing out of range is now an output id (10 >= 2), not the list length (2 = min(1000, 2)).
  EXPECT_EQ(what.rfind("e.json: runs[0].output_ids[0]: found 10; allowed: a token id from 0 to 1", 0), 0u) << what;
}

}  // namespace
}  // namespace genrepro
