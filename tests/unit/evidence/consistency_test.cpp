// The consistency layer (evidence/evidence_consistency.hpp) on real evidence: every case is one
// edit of a blessed golden (golden/fixture/*.json, written by `genrepro run`), and each must be
// refused naming the file, the JSON path and both values, or be classified as the relation says
// (an edit within rounding is accepted; texts without the tokenizer are not checked, and that is
// said). The unmutated files are the controls: each passes, with and without the tokenizer.
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "evidence/evidence_consistency.hpp"
#include "params/experiment_file.hpp"
#include "support/env_guard.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A model directory that exists nowhere, so the tokenizer is found only where a case puts it.
constexpr const char* kNoModelDir = "/nonexistent/genrepro-consistency-test-model";
constexpr const char* kNoTokenizerDir = "/nonexistent/genrepro-consistency-test-tokenizer";

std::string golden_path(const std::string& name) { return std::string(GENREPRO_SOURCE_DIR) + "/golden/fixture/" + name; }

// The golden as the reader sees it, with model.path pointing nowhere.
OrderedJson golden(const std::string& name) {
  std::ifstream in(golden_path(name));
  std::stringstream text;
  text << in.rdbuf();
  OrderedJson j = OrderedJson::parse(text.str());
  j["model"]["path"] = kNoModelDir;
  return j;
}

bool tokenizer_files_here() {
  const fs::path dir(GENREPRO_TEST_TOKENIZER_DIR);
  return fs::exists(dir / "encoder.json") || fs::exists(dir / "vocab.json");
}

// The id the run's fields hash to (params/experiment_file.cpp), for edits that keep it consistent.
void rehash_id(OrderedJson& run) {
  const RunParams p = params_from_json(nlohmann::json(run["params"]), "params");
  run["id"] = run_id(run["experiment"].get<std::string>(), run["prompt_index"].get<int64_t>(), run["prompt"].get<std::string>(), p);
}

// Sets output_ids[k] and steps[k].token_id together: the structural layer already holds them equal.
void set_token(OrderedJson& run, std::size_t k, int64_t id) {
  run["output_ids"][k] = id;
  run["steps"][k]["token_id"] = id;
}

struct Mutation {
  std::string name;
  std::string file;                       // in golden/fixture
  std::function<void(OrderedJson&)> edit; // one edit of the document
  std::string message;                    // "" : accepted; else a substring of the one-line error after "<file>: "
  bool needs_tokenizer = false;
};

OrderedJson& run0(OrderedJson& j) { return j["runs"][0]; }
OrderedJson& step(OrderedJson& j, std::size_t r, std::size_t k) { return j["runs"][r]["steps"][k]; }

const std::vector<Mutation> kMutations = {
    // ---- candidates: order, ids, derived values ----
    {"swapped_best_two", "greedy.json", [](OrderedJson& j) { std::swap(step(j, 0, 0)["top"][0], step(j, 0, 0)["top"][1]); },
     "runs[0].steps[0].top[1].prob_scaled: found 0.49664750695228577 after top[0].prob_scaled = 0.03380083292722702; allowed: at most "
     "0.03380083292722702"},
    {"best_moved_last", "eos.json",
     [](OrderedJson& j) {
       OrderedJson& top = step(j, 0, 0)["top"];
       OrderedJson best = top[0];
       top.erase(top.begin());
       top.push_back(best);
     },
     "runs[0].steps[0].top[4].prob_scaled: found 0.49664750695228577 after top[3].prob_scaled"},
    {"repeated_id", "eos.json", [](OrderedJson& j) { step(j, 0, 0)["top"][1]["id"] = 2413; },
     "runs[0].steps[0].top[1].id: found 2413, already top[0]"},
    {"rest_mass_edited", "greedy.json", [](OrderedJson& j) { step(j, 0, 0)["rest_mass"] = step(j, 0, 0)["rest_mass"].get<double>() + 1e-3; },
     "; allowed: 0.39868769980967045 (1 - the sum of top[].prob_scaled, within "},
    {"rest_mass_within_rounding", "greedy.json",
     [](OrderedJson& j) { step(j, 0, 0)["rest_mass"] = step(j, 0, 0)["rest_mass"].get<double>() + 1e-7; }, ""},
    {"rest_mass_past_rounding", "greedy.json",
     [](OrderedJson& j) { step(j, 0, 0)["rest_mass"] = step(j, 0, 0)["rest_mass"].get<double>() + 1e-5; },
     "runs[0].steps[0].rest_mass: found"},
    {"margin_halved", "greedy.json", [](OrderedJson& j) { step(j, 0, 3)["margin"] = step(j, 0, 3)["margin"].get<double>() / 2; },
     "runs[0].steps[3].margin: found"},
    {"kept_below_listed", "eos.json", [](OrderedJson& j) { step(j, 0, 0)["kept"] = 1; },
     "runs[0].steps[0].kept: found 1; allowed: at least 5 (the candidates with prob > 0 are all kept)"},
    {"final_prob_rises", "eos.json", [](OrderedJson& j) { step(j, 0, 0)["top"][2]["prob"] = 0.04; },
     "runs[0].steps[0].top[2].prob: found 0.04 after top[1].prob = 0.03754853829741478"},
    // ---- the chosen token ----
    {"greedy_not_best", "greedy.json",
     [](OrderedJson& j) { set_token(run0(j), 2, step(j, 0, 2)["top"][1]["id"].get<int64_t>()); },
     "runs[0].steps[2].token_id: found"},
    {"greedy_prob_not_t1", "greedy.json", [](OrderedJson& j) { step(j, 0, 1)["prob"] = 0.5; },
     "runs[0].steps[1].prob: found 0.5; allowed: prob_t1 = "},
    {"sampled_prob_not_its_entry", "temperature.json", [](OrderedJson& j) { step(j, 2, 23)["prob"] = 0.5; },
     "runs[2].steps[23].prob: found 0.5; allowed: runs[2].steps[23].top["},
    {"prob_t1_not_its_entry", "eos.json", [](OrderedJson& j) { step(j, 0, 3)["prob_t1"] = 0.25; },
     "runs[0].steps[3].prob_t1: found 0.25; allowed: runs[0].steps[3].top["},
    // ---- id, experiment, spec ----
    {"id_edited", "greedy.json",
     [](OrderedJson& j) {
       std::string id = run0(j)["id"];
       id.back() = id.back() == '0' ? '1' : '0';
       run0(j)["id"] = id;
     },
     "runs[0].id: found \"greedy/p0/greedy-"},
    {"params_edited", "eos.json", [](OrderedJson& j) { run0(j)["params"]["seed"] = uint64_t(44); }, "runs[0].id: found \"eos/p0/sample-t1-p0.9-s43-"},
    {"params_edited_id_rehashed", "eos.json",
     [](OrderedJson& j) {
       run0(j)["params"]["seed"] = uint64_t(44);  // as the writer writes it: unsigned
       rehash_id(run0(j));
     },
     "runs[0].id: found \"eos/p0/sample-t1-p0.9-s44-"},
    {"spec_edited", "eos.json", [](OrderedJson& j) { j["experiments"][0]["spec"]["runs"][0]["seed"] = uint64_t(44); },
     "(the run is not a point of its experiment's grid)"},
    {"prompt_edited_id_rehashed", "greedy.json",
     [](OrderedJson& j) {
       run0(j)["prompt"] = "the river bank is";
       rehash_id(run0(j));
     },
     "(the run is not a point of its experiment's grid)"},
    {"experiment_renamed", "greedy.json",
     [](OrderedJson& j) {
       run0(j)["experiment"] = "other";
       rehash_id(run0(j));
     },
     "runs[0].experiment: found \"other\"; allowed: an experiments[].name (\"greedy\")"},
    {"spec_not_an_experiment", "greedy.json", [](OrderedJson& j) { j["experiments"][0]["spec"]["max_new_tokens"] = "x"; },
     "experiments[0].spec: is not an experiment this build expands"},
    // ---- the stop ----
    {"context_too_small", "greedy.json", [](OrderedJson& j) { j["model"]["n_positions"] = 50; },
     "runs[0].output_ids: holds 50 ids after 4 prompt ids; allowed: at most 46 (model.n_positions = 50)"},
    {"context_full_claimed", "greedy.json", [](OrderedJson& j) { run0(j)["stop"]["reason"] = "context_full"; },
     "runs[0].stop.reason: found \"context_full\" with 4 + 50 ids"},
    {"context_full_consistent", "greedy.json",
     [](OrderedJson& j) {
       j["model"]["n_positions"] = 54;
       run0(j)["stop"]["reason"] = "context_full";
       run0(j)["params"]["max_new_tokens"] = 60;
       j["experiments"][0]["spec"]["max_new_tokens"] = 60;
       rehash_id(run0(j));
     },
     ""},
    {"eos_inside_the_output", "eos.json", [](OrderedJson& j) { set_token(run0(j), 10, 50256); },
     "runs[0].output_ids[10]: found model.eos_token_id = 50256 followed by 39 more ids; allowed: EOS only last"},
    {"eos_last_not_the_reason", "eos.json", [](OrderedJson& j) { set_token(run0(j), 49, 50256); },
     "runs[0].stop.reason: found \"max_new_tokens\"; allowed: \"eos\""},
    // ---- texts (the tokenizer at hand) ----
    {"candidate_text", "first_prediction_top5.json", [](OrderedJson& j) { step(j, 0, 0)["top"][0]["text"] = "<b>X</b>"; },
     "runs[0].steps[0].top[0].text: found \"<b>X</b>\"; allowed: \"", true},
    {"listed_token_text", "greedy.json", [](OrderedJson& j) { step(j, 0, 0)["token_text"] = "X"; },
     "runs[0].steps[0].token_text: found \"X\"; allowed: runs[0].steps[0].top[0].text = "},
    {"unlisted_token_text", "eos.json", [](OrderedJson& j) { step(j, 0, 0)["token_text"] = "X"; },
     "runs[0].steps[0].token_text: found \"X\"; allowed: \" Cavs\" (the tokenizer's decode of token_id 38943)", true},
    {"text", "greedy.json", [](OrderedJson& j) { run0(j)["text"] = run0(j)["text"].get<std::string>() + "!"; },
     "runs[0].text: found \"the river bank was", true},
    {"continuation", "eos.json", [](OrderedJson& j) { run0(j)["continuation"] = "x"; },
     "runs[0].continuation: found \"x\"; allowed: \" Cavs intelligencefrog", true},
    {"prompt_ids", "greedy.json", [](OrderedJson& j) { run0(j)["prompt_ids"][0] = 1000; },
     "runs[0].prompt_ids: found [1000,7850,3331,373]; allowed: [1169,7850,3331,373] (the tokenizer's encoding of prompt)", true},
};

class Consistency : public ::testing::TestWithParam<Mutation> {};

TEST_P(Consistency, OneEditIsRefusedOrClassified) {
  const Mutation& m = GetParam();
  if (m.needs_tokenizer && !tokenizer_files_here())
    GTEST_SKIP() << "GPT-2's tokenizer files are not in " << GENREPRO_TEST_TOKENIZER_DIR << " (scripts/setup.sh installs them)";
  test::EnvGuard tokenizer("GENREPRO_TOKENIZER_DIR", std::string(GENREPRO_TEST_TOKENIZER_DIR));
  OrderedJson j = golden(m.file);
  const std::string file = "golden/fixture/" + m.file;
  m.edit(j);
  if (m.message.empty()) {
    EXPECT_NO_THROW(evidence_from_json(j, file));
    return;
  }
  try {
    evidence_from_json(j, file);
    FAIL() << m.name << ": accepted; expected " << m.message;
  } catch (const EvidenceError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, HasSubstr(file + ": ")) << what;
    EXPECT_THAT(what, HasSubstr(m.message)) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(GoldenEdits, Consistency, ::testing::ValuesIn(kMutations),
                         [](const ::testing::TestParamInfo<Mutation>& info) { return info.param.name; });

std::vector<std::string> golden_names() {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(std::string(GENREPRO_SOURCE_DIR) + "/golden/fixture"))
    if (e.path().extension() == ".json") names.push_back(e.path().filename().string());
  return names;
}

// The controls: every golden as blessed passes, its texts checked when the tokenizer is at hand.
TEST(ConsistencyControl, EveryGoldenPassesWithItsTokenizer) {
  if (!tokenizer_files_here()) GTEST_SKIP() << "GPT-2's tokenizer files are not in " << GENREPRO_TEST_TOKENIZER_DIR;
  test::EnvGuard tokenizer("GENREPRO_TOKENIZER_DIR", std::string(GENREPRO_TEST_TOKENIZER_DIR));
  const std::vector<std::string> names = golden_names();
  ASSERT_GE(names.size(), 7u);
  for (const std::string& name : names) {
    const Evidence e = evidence_from_json(golden(name), name);
    EXPECT_EQ(texts_unchecked(e), "") << name;
  }
}

// Without the tokenizer the texts are not checked, and the note says so and why: a forged
// candidate text then passes the reader (diff still compares it against the golden's).
TEST(ConsistencyControl, WithoutTheTokenizerTextsAreSkippedAndSaidSo) {
  test::EnvGuard tokenizer("GENREPRO_TOKENIZER_DIR", std::string(kNoTokenizerDir));
  for (const std::string& name : golden_names()) {
    const Evidence e = evidence_from_json(golden(name), name);
    EXPECT_THAT(unchecked_texts_note(name, e), HasSubstr("note: " + name + ": texts not checked against the tokenizer: ")) << name;
    EXPECT_THAT(texts_unchecked(e), HasSubstr(kNoModelDir)) << name;
  }
  OrderedJson j = golden("first_prediction_top5.json");
  step(j, 0, 0)["top"][0]["text"] = "<b>X</b>";
  EXPECT_NO_THROW(evidence_from_json(j, "first_prediction_top5.json"));
}

// A tokenizer directory whose files are other bytes than the recorded ones is not the tokenizer
// the evidence names: the texts are not checked against it.
TEST(ConsistencyControl, AnotherTokenizerIsNotUsed) {
  if (!tokenizer_files_here()) GTEST_SKIP() << "GPT-2's tokenizer files are not in " << GENREPRO_TEST_TOKENIZER_DIR;
  test::EnvGuard tokenizer("GENREPRO_TOKENIZER_DIR", std::string(GENREPRO_TEST_TOKENIZER_DIR));
  OrderedJson j = golden("greedy.json");
  j["model"]["files"]["vocab.json"]["sha256"] = std::string(64, '0');
  run0(j)["text"] = "forged";
  const Evidence e = evidence_from_json(j, "greedy.json");
  EXPECT_THAT(texts_unchecked(e), HasSubstr("is another file than the recorded one"));
}

TEST(ConsistencySlack, IsFloat32RoundingOfTheSum) {
  // (N + 1) float32 epsilons: 5 candidates -> 6 * 2^-23.
  EXPECT_DOUBLE_EQ(relation_slack(5), 6.0 / 8388608.0);
}

}  // namespace
}  // namespace genrepro
