// The frameworks' presets, keys and checks (params/framework_params.hpp) as experiment
// files, params and evidence see them. An article run must be exactly what it was (its params
// JSON, and so its run id); a framework run records every value of its framework, resolved.
#include "params/framework_params.hpp"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

// The SpecError `read` throws, or "" when it reads the input.
template <class Read>
std::string spec_error_of(Read&& read) {
  try {
    read();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

std::string error_of(const std::string& text) {
  return spec_error_of([&] { parse_experiment(text, "experiments/x.json"); });
}

std::string with_run(const std::string& run) {
  return R"({"name": "x", "prompts": ["the river bank was"], "runs": [)" + run + "]}";
}

std::vector<std::string> keys_of(const nlohmann::ordered_json& j) {
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  return keys;
}

TEST(FrameworkPresets, ArticleParamsWriteExactlyTheKeysTheyAlwaysDid) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  EXPECT_EQ(keys_of(params_to_json(p)),
            (std::vector<std::string>{"mode", "temperature", "top_k", "top_p", "seed", "sampler_order", "top_p_rule", "rng",
                                      "max_new_tokens", "stop_at_eos", "use_cache", "top_candidates"}));
  // And an experiment without "framework" expands to the article's params, byte for byte.
  const ExperimentSpec spec = parse_experiment(with_run(R"({"mode": "sample", "temperature": 0.7, "top_p": 0.9, "seed": 42})"), "x.json");
  EXPECT_EQ(spec.runs[0].params.sampling.framework, Framework::article);
  EXPECT_EQ(params_to_json(spec.runs[0].params).dump(),
            R"({"mode":"sample","temperature":0.7,"top_k":0,"top_p":0.9,"seed":42,"sampler_order":["temperature","top_k","top_p"],)"
            R"("top_p_rule":"article","rng":"torch","max_new_tokens":50,"stop_at_eos":true,"use_cache":false,"top_candidates":5})");
}

TEST(FrameworkPresets, HuggingFaceDefaultsAreGenerationConfigs) {
  SamplingParams s;
  s.mode = DecodeMode::sample;
  s.seed = 7;
  resolve_framework(s, Framework::hf);
  EXPECT_EQ(s.temperature, 1.0);
  EXPECT_EQ(s.top_k, 50);
  EXPECT_EQ(s.top_p, 1.0);
  EXPECT_EQ(s.controls.min_p, 0.0);
  EXPECT_EQ(s.controls.typical_p, 1.0);
  EXPECT_EQ(s.controls.repetition_penalty, 1.0);
  EXPECT_EQ(s.rng, Rng::torch);
  EXPECT_EQ(s.top_p_rule, TopPRule::hf);
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(stage_names(s.sampler_order),
            (std::vector<std::string>{"sequence_bias", "repetition_penalty", "no_repeat_ngram_size", "bad_words_ids", "min_length",
                                      "min_new_tokens", "suppress_tokens", "temperature", "top_k", "top_p", "min_p", "typical_p",
                                      "epsilon_cutoff", "eta_cutoff"}));
  // Sampling: the processors are off by default, the warpers HF adds are top_k (50) only.
  EXPECT_EQ(stage_names(active_stages(s, false)), (std::vector<std::string>{"top_k"}));
  EXPECT_TRUE(active_stages(s, true).empty());
}

TEST(FrameworkPresets, LlamaCppDefaultsAreCommonParamsSamplings) {
  SamplingParams s;
  s.mode = DecodeMode::sample;
  resolve_framework(s, Framework::llama_cpp);
  EXPECT_EQ(s.temperature, 0.8);
  EXPECT_EQ(s.top_k, 40);
  EXPECT_EQ(s.top_p, 0.95);
  EXPECT_EQ(s.controls.min_p, 0.05);
  EXPECT_EQ(s.controls.typical_p, 1.0);
  EXPECT_EQ(s.controls.repeat_last_n, 64);
  EXPECT_EQ(s.controls.repeat_penalty, 1.0);
  EXPECT_EQ(s.controls.top_n_sigma, -1.0);
  EXPECT_EQ(s.rng, Rng::llama_cpp);
  EXPECT_EQ(stage_names(active_stages(s, false)), (std::vector<std::string>{"top_k", "top_p", "min_p", "temperature"}));
  SamplingParams g;
  resolve_framework(g, Framework::llama_cpp);  // greedy: --temp 0
  EXPECT_EQ(g.temperature, 0.0);
}

TEST(FrameworkPresets, ExplicitKeysOverrideAndEveryValueIsRecorded) {
  const ExperimentSpec spec = parse_experiment(
      with_run(R"({"mode": "sample", "framework": "llama.cpp", "temperature": 0.5, "repeat_penalty": 1.3, "seed": 42,
                   "logit_bias": [[50256, false], [13, -1.5]]})"),
      "x.json");
  const RunParams& p = spec.runs[0].params;
  EXPECT_EQ(p.sampling.temperature, 0.5);
  EXPECT_EQ(p.sampling.top_k, 40);  // the default, written out
  const nlohmann::ordered_json j = params_to_json(p);
  EXPECT_EQ(j["framework"], "llama.cpp");
  EXPECT_EQ(j["repeat_penalty"], 1.3);
  EXPECT_EQ(j["repeat_last_n"], 64);
  EXPECT_EQ(j["min_p"], 0.05);
  EXPECT_EQ(j["logit_bias"].dump(), R"([[50256,"-Infinity"],[13,-1.5]])");
  EXPECT_FALSE(j.contains("repetition_penalty"));  // Hugging Face's: not this framework's
  EXPECT_EQ(spec.runs[0].id.find("x/p0/llamacpp-sample-t0.5-k40-p0.95-s42-"), 0u) << spec.runs[0].id;
  // Evidence reads back what it wrote, and writes it again byte for byte.
  const RunParams back = params_from_json(nlohmann::json(j), "runs[0].params");
  EXPECT_EQ(params_to_json(back).dump(), j.dump());
  EXPECT_EQ(back.sampling.controls.logit_bias[0].bias, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(check_run_params(back).empty());
}

TEST(FrameworkPresets, HfParamsRoundTripWithEveryControlSet) {
  const ExperimentSpec spec = parse_experiment(
      with_run(R"({"mode": "sample", "framework": "hf", "seed": 1, "temperature": 0.7, "top_k": 0, "top_p": 0.9,
                   "min_p": 0.05, "typical_p": 0.9, "epsilon_cutoff": 0.0003, "eta_cutoff": 0.002, "repetition_penalty": 1.2,
                   "no_repeat_ngram_size": 3, "bad_words_ids": [[1169], [7850, 3331]], "sequence_bias": [[[373], -2.5]],
                   "suppress_tokens": [50256], "min_new_tokens": 5, "min_length": 3})"),
      "x.json");
  const RunParams& p = spec.runs[0].params;
  const nlohmann::ordered_json j = params_to_json(p);
  EXPECT_EQ(params_to_json(params_from_json(nlohmann::json(j), "p")).dump(), j.dump());
  EXPECT_EQ(stage_names(active_stages(p.sampling, false)),
            (std::vector<std::string>{"sequence_bias", "repetition_penalty", "no_repeat_ngram_size", "bad_words_ids", "min_length",
                                      "min_new_tokens", "suppress_tokens", "temperature", "top_p", "min_p", "typical_p",
                                      "epsilon_cutoff", "eta_cutoff"}));
  EXPECT_EQ(spec.runs[0].id.find("x/p0/hf-sample-t0.7-p0.9-s1-"), 0u) << spec.runs[0].id;
}

TEST(FrameworkPresets, AGridOverFrameworksKeepsEachFrameworksDefaults) {
  const ExperimentSpec spec =
      parse_experiment(with_run(R"({"mode": "sample", "framework": ["hf", "llama.cpp"], "top_k": 10, "min_p": 0.1, "seed": 3})"), "x.json");
  ASSERT_EQ(spec.runs.size(), 2u);
  EXPECT_EQ(spec.runs[0].params.sampling.framework, Framework::hf);
  EXPECT_EQ(spec.runs[0].params.sampling.temperature, 1.0);
  EXPECT_EQ(spec.runs[1].params.sampling.framework, Framework::llama_cpp);
  EXPECT_EQ(spec.runs[1].params.sampling.temperature, 0.8);
  EXPECT_EQ(spec.runs[1].params.sampling.top_k, 10);
  EXPECT_EQ(spec.runs[1].params.sampling.controls.min_p, 0.1);
}

TEST(FrameworkPresets, LlamaCppOrderIsAnyPermutationOfItsSevenStages) {
  const ExperimentSpec spec = parse_experiment(
      with_run(R"({"mode": "sample", "framework": "llama.cpp", "seed": 1,
                   "sampler_order": ["temperature", "penalties", "top_n_sigma", "top_k", "typical_p", "top_p", "min_p"]})"),
      "x.json");
  EXPECT_EQ(stage_names(spec.runs[0].params.sampling.sampler_order),
            (std::vector<std::string>{"logit_bias", "temperature", "penalties", "top_n_sigma", "top_k", "typical_p", "top_p", "min_p",
                                      "dist"}));
}

TEST(FrameworkErrors, EveryBadValueNamesTheFilePathAndWhatIsAllowed) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "repetition_penalty": 1.3})")),
            "experiments/x.json: runs[0].repetition_penalty: is Hugging Face's control, and this entry's framework is article; "
            "add \"framework\": \"hf\" to the entry");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "llama.cpp", "repetition_penalty": 1.3})")),
            "experiments/x.json: runs[0].repetition_penalty: is Hugging Face's control, and this entry's framework is llama.cpp; "
            "give it in an entry of its framework");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "vllm"})")),
            "experiments/x.json: runs[0].framework = vllm is not allowed; allowed: one of {article, hf, llama.cpp}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "repetition_penalty": 0})")),
            "experiments/x.json: runs[0].repetition_penalty = 0 is not allowed; allowed: a number > 0 (1 turns it off)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "repetition_penalty": [1.2, -1]})")),
            "experiments/x.json: runs[0].repetition_penalty[1] = -1 is not allowed; allowed: a number > 0 (1 turns it off)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "min_p": 0.1})")),
            "experiments/x.json: runs[0].min_p: has no effect with mode \"greedy\" (it always picks the most probable token); "
            "remove it, or use mode \"sample\"");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "hf", "seed": 1, "min_p": 1.5})")),
            "experiments/x.json: runs[0].min_p = 1.5 is not allowed; allowed: a number in [0, 1] (0 turns min-p off)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "hf", "seed": 1, "bad_words_ids": [[]]})")),
            "experiments/x.json: runs[0].bad_words_ids = [[]] is not allowed; allowed: a list of non-empty lists of token ids "
            "or texts (a text is one sequence), e.g. [[1169], [7850, 3331], \"the cat\"]");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "llama.cpp", "seed": 4294967295})")),
            "experiments/x.json: runs[0].seed = 4294967295 is not allowed; allowed: an integer from 0 to 4294967294 "
            "(llama_sampler_init_dist takes a uint32, and 4294967295 is LLAMA_DEFAULT_SEED: a random seed)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "llama.cpp", "seed": 1, "logit_bias": [[5, true]]})")),
            "experiments/x.json: runs[0].logit_bias = [[5,true]] is not allowed; allowed: a list of [token id or text, bias] "
            "pairs (a text biases every token it encodes to), bias a finite number or false / \"-Infinity\" (never), e.g. "
            "[[50256, false], [\"Hello\", -0.5]]");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "hf", "seed": 1, "sampler_order": ["top_k", "temperature"]})")),
            "experiments/x.json: runs[0].sampler_order = top_k,temperature is not allowed; allowed: Hugging Face's fixed order "
            "sequence_bias,repetition_penalty,no_repeat_ngram_size,bad_words_ids,min_length,min_new_tokens,suppress_tokens,"
            "temperature,top_k,top_p,min_p,typical_p,epsilon_cutoff,eta_cutoff (generate() cannot reorder its processors)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "llama.cpp", "seed": 1, "sampler_order": ["top_k", "temperature"]})")),
            "experiments/x.json: runs[0].sampler_order = top_k,temperature is not allowed; allowed: the seven stages {penalties, "
            "top_n_sigma, top_k, typical_p, top_p, min_p, temperature} in any order, each once (logit_bias always runs first and "
            "dist last)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "hf", "seed": 1, "top_p_rule": "article"})")),
            "experiments/x.json: runs[0].top_p_rule = article is not allowed; allowed: hf (framework hf applies Hugging Face's "
            "TopPLogitsWarper)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "framework": "llama.cpp", "seed": 1, "rng": "torch"})")),
            "experiments/x.json: runs[0].rng = torch is not allowed; allowed: llama.cpp (framework llama.cpp draws with llama.cpp's "
            "dist sampler)");
  // The unknown-key list of an entry without a framework is the article's, as ever.
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temprature": 0.5, "seed": 1})")),
            "experiments/x.json: runs[0].temprature: unknown key; did you mean \"temperature\"? (known here: mode, "
            "temperature, top_k, top_p, seed, sampler_order, top_p_rule, rng, max_new_tokens, stop_at_eos, use_cache, replicas, engine)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "repetion_penalty": 1.2})"))
                .rfind("experiments/x.json: runs[0].repetion_penalty: unknown key; did you mean \"repetition_penalty\"?", 0),
            0u);
}

TEST(FrameworkErrors, EvidenceParamsAreCheckedTheSameWay) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.controls.repetition_penalty = 1.3;  // an article run with Hugging Face's control
  const auto problems = check_run_params(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(describe_problem(problems[0], "runs[0].params.repetition_penalty"),
            "runs[0].params.repetition_penalty = 1.3 is not allowed; allowed: its off value 1.0 unless framework hf "
            "(repetition_penalty is Hugging Face's control; this run's framework is article)");
  nlohmann::json j = nlohmann::json(params_to_json(p));
  j["framework"] = "article";
  EXPECT_THROW(params_from_json(j, "p"), SpecError);
}

std::string evidence_params_error(const nlohmann::json& j) {
  return spec_error_of([&] { params_from_json(j, "runs[0].params"); });
}

// Read back, a key the run's framework never writes would be dropped: two runs differing only in
// it would compare as equal though the engine applied it in neither.
TEST(FrameworkErrors, EvidenceParamsRefuseKeysTheirFrameworkNeverWrites) {
  const nlohmann::json hf = nlohmann::json(params_to_json(framework_defaults(Framework::hf, DecodeMode::sample)));
  ASSERT_EQ(evidence_params_error(hf), "");

  nlohmann::json j = hf;
  j["repeat_penalty"] = 1.1;  // llama.cpp's penalty in a Hugging Face run
  EXPECT_EQ(evidence_params_error(j),
            "runs[0].params.repeat_penalty: is llama.cpp's control, which a run of framework hf never writes "
            "(give it only in runs of its framework)");

  nlohmann::json llama = nlohmann::json(params_to_json(framework_defaults(Framework::llama_cpp, DecodeMode::sample)));
  ASSERT_EQ(evidence_params_error(llama), "");
  llama["no_repeat_ngram_size"] = 3;
  EXPECT_NE(evidence_params_error(llama).find("runs[0].params.no_repeat_ngram_size: is Hugging Face's control"),
            std::string::npos);

  RunParams article;
  article.sampling.mode = DecodeMode::sample;
  nlohmann::json a = nlohmann::json(params_to_json(article));
  ASSERT_EQ(evidence_params_error(a), "");
  a["min_keep"] = 1;  // even at its off value: an article run writes no control
  EXPECT_NE(evidence_params_error(a).find("runs[0].params.min_keep: is llama.cpp's control"), std::string::npos);

  nlohmann::json unknown = hf;
  unknown["top_a"] = 0.5;  // a sampler this version does not know
  const std::string e = evidence_params_error(unknown);
  EXPECT_EQ(e.rfind("runs[0].params.top_a: unknown key (this run's params hold: ", 0), 0u) << e;
  EXPECT_NE(e.find("repetition_penalty"), std::string::npos) << e;
}

}  // namespace
}  // namespace genrepro
