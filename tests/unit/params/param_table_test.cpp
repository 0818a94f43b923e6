// The parameter table (params/param_table.hpp): every run parameter declared once, and what each
// consumer reads from it held to independent statements of the same facts: evidence's key order
// as docs/evidence-format.md lists it, diff's groups as docs/diff.md names them, the frameworks'
// presets as transformers' GenerationConfig and llama.cpp's common_params_sampling define them.
#include "params/param_table.hpp"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "params/framework_params.hpp"

namespace genrepro {
namespace {

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

TEST(ParamTable, EvidenceWritesTheDocumentedKeysInTheDocumentedOrder) {
  // docs/evidence-format.md, "params": the article's keys of every run, in this order.
  const std::vector<std::string> article = {"mode",           "temperature", "top_k",     "top_p",         "seed",
                                            "sampler_order",  "top_p_rule",  "rng",       "max_new_tokens", "stop_at_eos",
                                            "use_cache",      "top_candidates"};
  RunParams p;
  EXPECT_EQ(keys_of(params_to_json(p)), article);
  // A copy writes its index after them; a framework run its framework, then its own controls.
  p.replica = 3;
  std::vector<std::string> copy = article;
  copy.push_back("replica");
  EXPECT_EQ(keys_of(params_to_json(p)), copy);
  RunParams llama = framework_defaults(Framework::llama_cpp, DecodeMode::sample);
  std::vector<std::string> expected = article;
  for (const char* k : {"framework", "min_p", "typical_p", "repeat_last_n", "repeat_penalty", "frequency_penalty",
                        "presence_penalty", "logit_bias", "top_n_sigma", "dynatemp_range", "dynatemp_exponent", "min_keep"})
    expected.push_back(k);
  EXPECT_EQ(keys_of(params_to_json(llama)), expected);
}

TEST(ParamTable, EveryRowReadsBackWhatItWrites) {
  for (Framework f : kFrameworks) {
    for (DecodeMode mode : {DecodeMode::greedy, DecodeMode::sample}) {
      RunParams p = framework_defaults(f, mode);
      p.sampling.seed = 42;
      p.max_new_tokens = 7;
      for (const ParamRow& row : param_table()) {
        if (row.is_control() && !row.has(f)) continue;
        if (std::string(row.key) == "framework") continue;  // resolving a framework resets the rest
        RunParams q = p;
        const auto problem = row.read(q, row.get(p));
        ASSERT_FALSE(problem) << row.key << " of " << to_string(f) << ": " << problem->allowed;
        EXPECT_EQ(row.get(q), row.get(p)) << row.key;
      }
    }
  }
}

TEST(ParamTable, EveryRowRefusesAValueOfTheWrongType) {
  for (const ParamRow& row : param_table()) {
    RunParams p = framework_defaults(row.has(Framework::hf) ? Framework::hf : Framework::llama_cpp, DecodeMode::sample);
    const nlohmann::json wrong = row.kind == ParamKind::boolean ? nlohmann::json("yes") : nlohmann::json::object();
    EXPECT_TRUE(row.read(p, wrong)) << row.key << " took " << wrong.dump();
    EXPECT_FALSE(row.allowed().empty()) << row.key;
  }
}

TEST(ParamTable, ControlsAreTheRowsOnlyTheFrameworksHave) {
  std::set<std::string> controls;
  for (const ParamRow* k : control_keys()) controls.insert(k->key);
  // docs/sampling.md's control x framework table.
  const std::set<std::string> expected = {"min_p",          "typical_p",         "repetition_penalty", "no_repeat_ngram_size",
                                          "bad_words_ids",  "sequence_bias",     "suppress_tokens",    "min_new_tokens",
                                          "min_length",     "epsilon_cutoff",    "eta_cutoff",         "repeat_last_n",
                                          "repeat_penalty", "frequency_penalty", "presence_penalty",   "logit_bias",
                                          "top_n_sigma",    "dynatemp_range",    "dynatemp_exponent",  "min_keep"};
  EXPECT_EQ(controls, expected);
  EXPECT_TRUE(find_control_key("repeat_penalty")->has(Framework::llama_cpp));
  EXPECT_FALSE(find_control_key("repeat_penalty")->has(Framework::hf));
  EXPECT_TRUE(find_control_key("min_p")->has(Framework::hf) && find_control_key("min_p")->has(Framework::llama_cpp));
  EXPECT_EQ(find_control_key("temperature"), nullptr);
}

TEST(ParamTable, DiffGroupsAreTheDocumentedOnes) {
  // docs/diff.md, "Verdicts": which parameters explain which change.
  const auto members = [](unsigned group) {
    std::set<std::string> keys;
    for (const ParamRow& row : param_table())
      if (row.diff_groups & group) keys.insert(row.key);
    return keys;
  };
  EXPECT_EQ(members(kShapesModel), (std::set<std::string>{"engine", "mode", "temperature"}));
  EXPECT_EQ(members(kSetsKept), (std::set<std::string>{"top_k", "top_p"}));
  EXPECT_EQ(members(kSetsSampler), (std::set<std::string>{"mode", "temperature", "seed", "rng", "sampler_order", "top_p_rule"}));
  EXPECT_EQ(members(kSetsStop), (std::set<std::string>{"max_new_tokens", "stop_at_eos"}));
  EXPECT_EQ(members(kSetsListing), (std::set<std::string>{"top_candidates"}));
  std::set<std::string> chain = {"framework"};
  for (const ParamRow* k : control_keys()) chain.insert(k->key);
  EXPECT_EQ(members(kSetsChain), chain);
}

TEST(ParamTable, EverySpellingNamesOneParameter) {
  std::set<std::string> seen;
  for (const ParamRow& row : param_table())
    for (const FlagSpelling& f : row.flags) EXPECT_TRUE(seen.insert(f.text).second) << f.text << " names two parameters";
  // The spellings users of the other frameworks type (llama.cpp's common/arg.cpp, generate()'s kwargs).
  EXPECT_EQ(primary_spelling("-n"), "--max-new-tokens");
  EXPECT_EQ(primary_spelling("--n-predict"), "--max-new-tokens");
  EXPECT_EQ(primary_spelling("--temp"), "--temperature");
  EXPECT_EQ(primary_spelling("-s"), "--seed");
  EXPECT_EQ(primary_spelling("--samplers"), "--sampler-order");
  EXPECT_EQ(primary_spelling("--do-sample"), "--greedy");
  EXPECT_EQ(primary_spelling("--repeat-penalty"), "--repeat-penalty");
  EXPECT_EQ(primary_spelling("--no-such-flag"), "--no-such-flag");
}

TEST(ParamTable, PresetsAreTheFrameworksDefaults) {
  // llama.cpp's common_params_sampling: temp 0.80, top_k 40, top_p 0.95, min_p 0.05, penalty_last_n 64.
  const RunParams llama = framework_defaults(Framework::llama_cpp, DecodeMode::sample);
  EXPECT_EQ(llama.sampling.temperature, 0.8);
  EXPECT_EQ(llama.sampling.top_k, 40);
  EXPECT_EQ(llama.sampling.top_p, 0.95);
  EXPECT_EQ(llama.sampling.controls.min_p, 0.05);
  EXPECT_EQ(llama.sampling.controls.repeat_last_n, 64);
  EXPECT_EQ(llama.sampling.rng, Rng::llama_cpp);
  // llama.cpp's greedy is --temp 0.
  EXPECT_EQ(framework_defaults(Framework::llama_cpp, DecodeMode::greedy).sampling.temperature, 0.0);
  // transformers' GenerationConfig: temperature 1.0, top_k 50, top_p 1.0.
  const RunParams hf = framework_defaults(Framework::hf, DecodeMode::sample);
  EXPECT_EQ(hf.sampling.temperature, 1.0);
  EXPECT_EQ(hf.sampling.top_k, 50);
  EXPECT_EQ(hf.sampling.top_p, 1.0);
  EXPECT_EQ(hf.sampling.top_p_rule, TopPRule::hf);
}

std::string label_of(const RunParams& p) {
  std::string out;
  for (const LabelPart& part : label_parts(p)) out += (out.empty() ? "" : " ") + part.text;
  return out;
}

TEST(ParamTable, LabelsNameTheFrameworkAndEveryControlThatIsOn) {
  RunParams llama = framework_defaults(Framework::llama_cpp, DecodeMode::sample);
  llama.sampling.temperature = 0.7;
  llama.sampling.seed = 3;
  llama.sampling.controls.repeat_penalty = 1.1;
  EXPECT_EQ(label_of(llama), "llama.cpp T=0.7 top_k=40 top_p=0.95 seed=3 min_p=0.05 repeat_penalty=1.1");
  RunParams hf = framework_defaults(Framework::hf, DecodeMode::sample);
  hf.sampling.controls.repetition_penalty = 1.3;
  EXPECT_EQ(label_of(hf), "hf T=1 top_k=50 seed=0 repetition_penalty=1.3");
  // The article's: its own order and rule are not named; another order is, by whole stage names.
  RunParams article;
  article.sampling.mode = DecodeMode::sample;
  article.sampling.top_p = 0.9;
  EXPECT_EQ(label_of(article), "T=1 top_p=0.9 seed=0");
  article.sampling.sampler_order = {SamplerStage::top_p, SamplerStage::temperature};
  article.sampling.top_p_rule = TopPRule::hf;
  EXPECT_EQ(label_of(article), "T=1 top_p=0.9 seed=0 order=top_p→temperature top_p_rule=hf");
  // Numbers as written: 0.7, not 0.69999999999999996.
  article.sampling.temperature = 0.69999999999999996;
  EXPECT_EQ(label_parts(article)[0].text, "T=0.7");
  RunParams greedy = framework_defaults(Framework::hf, DecodeMode::greedy);
  greedy.sampling.controls.repetition_penalty = 1.3;
  EXPECT_EQ(label_of(greedy), "hf greedy repetition_penalty=1.3");
}

TEST(ParamTable, CsvValuesAreWrittenAsUsersWriteThem) {
  RunParams p;
  p.sampling.temperature = 0.7;
  p.sampling.top_p = 0.9;
  EXPECT_EQ(csv_value(param("temperature"), p), "0.7");
  EXPECT_EQ(csv_value(param("top_p"), p), "0.9");
  EXPECT_EQ(csv_value(param("sampler_order"), p), "temperature top_k top_p");
  EXPECT_EQ(csv_value(param("use_cache"), p), "false");
  EXPECT_EQ(csv_value(param("bad_words_ids"), p), "[]");
}

}  // namespace
}  // namespace genrepro
