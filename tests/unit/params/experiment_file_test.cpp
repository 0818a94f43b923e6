// Experiment files: every class of error gives one line naming the file, the JSON path, the
// value and what is allowed; grids expand to the cartesian product in a documented order; ids
// are stable (pinned here, so a change to the id scheme is a visible, deliberate change).
#include "params/experiment_file.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro {
namespace {

constexpr const char* kPath = "experiments/x.json";

std::string error_of(const std::string& text) {
  try {
    parse_experiment(text, kPath);
  } catch (const SpecError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message must be one line: " << msg;
    return msg;
  }
  ADD_FAILURE() << "expected a SpecError for: " << text;
  return {};
}

// A valid file with one run entry `run` (a JSON object text) and extra top-level text.
std::string with_run(const std::string& run, const std::string& extra = "") {
  return R"({"name": "x", "prompts": ["the river bank was"], )" + extra + R"("runs": [)" + run + "]}";
}

TEST(ExperimentSpec, MinimalGreedyFileFillsDefaults) {
  const ExperimentSpec s = parse_experiment(with_run(R"({"mode": "greedy"})"), kPath);
  ASSERT_EQ(s.runs.size(), 1u);
  const ExpandedRun& r = s.runs[0];
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(r.prompt, "the river bank was");
  EXPECT_EQ(r.params.sampling.mode, DecodeMode::greedy);
  EXPECT_EQ(r.params.max_new_tokens, 50);
  EXPECT_TRUE(r.params.stop_at_eos);
  EXPECT_FALSE(r.params.use_cache);
  EXPECT_EQ(r.params.top_candidates, 5);
  EXPECT_EQ(r.source, "runs[0]");
}

TEST(ExperimentSpec, IssueExampleExpandsToSevenRunsInOrder) {
  // An example experiment file: 1 greedy + 3 temperatures + 3 seeds + 1 sampler-order run.
  const std::string text = R"({
    "name": "temperature",
    "description": "Sampling at three temperatures with one seed (article: Temperature).",
    "prompts": ["the river bank was"],
    "max_new_tokens": 50, "stop_at_eos": true, "use_cache": false,
    "runs": [
      {"mode": "greedy"},
      {"mode": "sample", "temperature": [0.001, 1.0, 2.0], "seed": 42},
      {"mode": "sample", "temperature": 1.0, "top_p": 0.9, "seed": [41, 42, 43]},
      {"mode": "sample", "temperature": 0.5, "top_p": 0.8, "sampler_order": ["top_p", "temperature"], "seed": 1}
    ],
    "record": {"top_candidates": 5}
  })";
  const ExperimentSpec s = parse_experiment(text, kPath);
  ASSERT_EQ(s.runs.size(), 8u);
  EXPECT_DOUBLE_EQ(s.runs[1].params.sampling.temperature, 0.001);
  EXPECT_DOUBLE_EQ(s.runs[3].params.sampling.temperature, 2.0);
  EXPECT_EQ(s.runs[4].params.sampling.seed, 41u);
  EXPECT_EQ(s.runs[6].params.sampling.seed, 43u);
  EXPECT_EQ(s.runs[7].params.sampling.sampler_order,
            (std::vector<SamplerStage>{SamplerStage::top_p, SamplerStage::temperature}));
  // Pinned ids: the summary is readable, the hash covers every parameter and the prompt.
  EXPECT_EQ(s.runs[0].id.substr(0, s.runs[0].id.rfind('-')), "temperature/p0/greedy");
  EXPECT_EQ(s.runs[1].id.substr(0, s.runs[1].id.rfind('-')), "temperature/p0/sample-t0.001-s42");
  EXPECT_EQ(s.runs[5].id.substr(0, s.runs[5].id.rfind('-')), "temperature/p0/sample-t1-p0.9-s42");
  for (const auto& r : s.runs) EXPECT_EQ(r.id.size() - r.id.rfind('-') - 1, 8u) << r.id;
  EXPECT_EQ(s.sha256.size(), 64u);
}

TEST(ExperimentSpec, IdsAreStableAndDependOnEveryParameter) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.seed = 42;
  const std::string base = run_id("e", 0, "hello", p);
  // Pinned, and computed independently with Python (docs/evidence-format.md, "Run ids"):
  // json.dumps({"params": ..., "prompt": "hello"}, sort_keys=True, separators=(",", ":")).
  EXPECT_EQ(base, "e/p0/sample-t1-s42-88022a87");
  // Every parameter and the prompt move the hash, even those the summary leaves out.
  std::vector<std::string> ids = {base, run_id("e", 0, "hello!", p)};
  RunParams q = p;
  q.sampling.top_p_rule = TopPRule::hf;
  ids.push_back(run_id("e", 0, "hello", q));
  q = p;
  q.sampling.sampler_order = {SamplerStage::top_p, SamplerStage::top_k, SamplerStage::temperature};
  ids.push_back(run_id("e", 0, "hello", q));
  q = p;
  q.use_cache = true;
  ids.push_back(run_id("e", 0, "hello", q));
  q = p;
  q.top_candidates = 6;
  ids.push_back(run_id("e", 0, "hello", q));
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NE(ids[i], ids[j]);
  }
}

TEST(ExperimentSpec, GridIsCartesianFirstKeySlowest) {
  const ExperimentSpec s = parse_experiment(
      with_run(R"({"mode": "sample", "temperature": [0.5, 1.0], "top_p": [0.8, 0.9, 1.0], "seed": [1, 2]})"), kPath);
  ASSERT_EQ(s.runs.size(), 12u);
  // temperature varies slowest, then top_p, then seed.
  EXPECT_DOUBLE_EQ(s.runs[0].params.sampling.temperature, 0.5);
  EXPECT_DOUBLE_EQ(s.runs[0].params.sampling.top_p, 0.8);
  EXPECT_EQ(s.runs[0].params.sampling.seed, 1u);
  EXPECT_EQ(s.runs[1].params.sampling.seed, 2u);
  EXPECT_DOUBLE_EQ(s.runs[2].params.sampling.top_p, 0.9);
  EXPECT_DOUBLE_EQ(s.runs[6].params.sampling.temperature, 1.0);
  EXPECT_DOUBLE_EQ(s.runs[11].params.sampling.top_p, 1.0);
  EXPECT_EQ(s.runs[11].params.sampling.seed, 2u);
}

TEST(ExperimentSpec, PromptsAreTheOuterLoop) {
  const ExperimentSpec s = parse_experiment(
      R"({"name": "x", "prompts": ["a", "b"], "runs": [{"mode": "greedy"}, {"mode": "sample", "seed": [1, 2]}]})", kPath);
  ASSERT_EQ(s.runs.size(), 6u);
  EXPECT_EQ(s.runs[0].prompt, "a");
  EXPECT_EQ(s.runs[2].params.sampling.seed, 2u);
  EXPECT_EQ(s.runs[3].prompt, "b");
  EXPECT_EQ(s.runs[3].prompt_index, 1);
  EXPECT_NE(s.runs[0].id, s.runs[3].id);
  EXPECT_EQ(s.runs[3].id.substr(0, 12), "x/p1/greedy-");
}

TEST(ExperimentSpec, SamplerOrderGridIsAListOfLists) {
  const ExperimentSpec s = parse_experiment(
      with_run(R"({"mode": "sample", "temperature": 0.5, "top_p": 0.9, "seed": 7,
                   "sampler_order": [["temperature", "top_p"], ["top_p", "temperature"]]})"),
      kPath);
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[1].params.sampling.sampler_order,
            (std::vector<SamplerStage>{SamplerStage::top_p, SamplerStage::temperature}));
  EXPECT_NE(s.runs[0].id, s.runs[1].id);
}

TEST(ExperimentSpec, TopLevelDefaultsAreInheritedAndOverridden) {
  const ExperimentSpec s = parse_experiment(
      with_run(R"({"mode": "greedy"}, {"mode": "greedy", "max_new_tokens": 3, "use_cache": true})",
               R"("max_new_tokens": 7, "stop_at_eos": false, )"),
      kPath);
  ASSERT_EQ(s.runs.size(), 2u);
  EXPECT_EQ(s.runs[0].params.max_new_tokens, 7);
  EXPECT_FALSE(s.runs[0].params.stop_at_eos);
  EXPECT_EQ(s.runs[1].params.max_new_tokens, 3);
  EXPECT_TRUE(s.runs[1].params.use_cache);
  EXPECT_FALSE(s.runs[1].params.stop_at_eos);
}

TEST(ExperimentSpec, FirstPredictionRunsMayOmitTheSeed) {
  const ExperimentSpec s =
      parse_experiment(with_run(R"({"mode": "sample", "temperature": [0.5, 1, 2], "max_new_tokens": 0})"), kPath);
  EXPECT_EQ(s.runs.size(), 3u);
  EXPECT_EQ(s.runs[2].params.max_new_tokens, 0);
}

// ---- every class of error, with its message ----

TEST(ExperimentSpecErrors, InvalidJsonNamesLineAndColumn) {
  EXPECT_EQ(error_of("{\"name\": \"x\",\n  \"prompts\": [1,]\n}"),
            "experiments/x.json: invalid JSON: parse error at line 2, column 17: syntax error while parsing value - "
            "unexpected ']'; expected '[', '{', or a literal");
}

TEST(ExperimentSpecErrors, DeepNestingIsRefusedBeforeParsing) {
  // A million brackets would overflow nlohmann's recursive parser; the pre-scan stops at 65.
  const std::string text = "{\"runs\": " + std::string(1000000, '[');
  EXPECT_EQ(error_of(text), "experiments/x.json: line 1, column 73: JSON nested deeper than 64 levels; "
                            "this file cannot be an experiment or evidence file");
}

TEST(ExperimentSpecErrors, InvalidUtf8NamesTheByte) {
  EXPECT_EQ(error_of("{\"name\": \"x\",\n \"prompts\": [\"caf\xe9\"]}"),
            "experiments/x.json: line 2, column 18: invalid UTF-8 (byte 0xE9); save the file as UTF-8");
  // An encoded surrogate (U+D800 as ED A0 80) is not UTF-8 either.
  EXPECT_EQ(error_of("{\"name\": \"\xed\xa0\x80\"}"),
            "experiments/x.json: line 1, column 11: invalid UTF-8 (byte 0xED); save the file as UTF-8");
}

TEST(ExperimentSpecErrors, DuplicateKeysAreRefused) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "seed": 2})")),
            "experiments/x.json: runs[0].seed: key given twice; an object may name each key once");
}

TEST(ExperimentSpecErrors, WrongTypes) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temperature": "hot", "seed": 1})")),
            "experiments/x.json: runs[0].temperature = \"hot\" is not allowed; allowed: 0 (greedy) or a number from 1e-30 to 1e+30 (beyond them logits / T leaves float32's range)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1.5})")),
            "experiments/x.json: runs[0].seed = 1.5 is not allowed; allowed: a non-negative integer below 2^64 (decimal digits only)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "use_cache": "yes"})")),
            "experiments/x.json: runs[0].use_cache = \"yes\" is not allowed; allowed: true or false");
  EXPECT_EQ(error_of(R"({"name": "x", "prompts": "the river bank was", "runs": [{"mode": "greedy"}]})"),
            "experiments/x.json: prompts = \"the river bank was\" is not allowed; allowed: a non-empty list of non-empty strings");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "top_k": 2.0, "seed": 1})")),
            "experiments/x.json: runs[0].top_k = 2.0 is not allowed; allowed: an integer >= 0 (0 turns top-k off)");
  EXPECT_EQ(error_of("[1, 2]"),
            "experiments/x.json: (top level) = [1,2] is not allowed; allowed: an object with name, prompts and runs "
            "(see docs/experiments.md)");
}

TEST(ExperimentSpecErrors, OutOfRangeValuesUseTheSharedWords) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temperature": [1.0, -0.5], "seed": 1})")),
            "experiments/x.json: runs[0].temperature[1] = -0.5 is not allowed; allowed: 0 (greedy) or a number from 1e-30 to 1e+30 (beyond them logits / T leaves float32's range)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "top_p": 1.5, "seed": 1})")),
            "experiments/x.json: runs[0].top_p = 1.5 is not allowed; allowed: a number in (0, 1] (1 turns top-p off)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": -1})")),
            "experiments/x.json: runs[0].seed = -1 is not allowed; allowed: a non-negative integer below 2^64 (decimal digits only)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy"})", R"("max_new_tokens": -3, )")),
            "experiments/x.json: max_new_tokens = -3 is not allowed; allowed: an integer >= 0 (0 records only the first prediction)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "sampler_order": ["temperature", "top_q"]})")),
            "experiments/x.json: runs[0].sampler_order = top_q is not allowed; allowed: a comma-separated list of distinct "
            "stages from {temperature, top_k, top_p}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "rng": "mt"})")),
            "experiments/x.json: runs[0].rng = mt is not allowed; allowed: one of {torch, portable}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy"})", R"("record": {"top_candidates": -1}, )")),
            "experiments/x.json: record.top_candidates = -1 is not allowed; allowed: an integer >= 0");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 18446744073709551616})")),
            "experiments/x.json: runs[0].seed = 1.8446744073709552e+19 is not allowed; allowed: a non-negative integer "
            "below 2^64 (decimal digits only)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temperature": 1e400, "seed": 1})")).substr(0, 38),
            "experiments/x.json: invalid JSON: numb");
}

TEST(ExperimentSpecErrors, UnknownKeysSuggestTheNearest) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temprature": 0.5, "seed": 1})")),
            "experiments/x.json: runs[0].temprature: unknown key; did you mean \"temperature\"? (known here: mode, "
            "temperature, top_k, top_p, seed, sampler_order, top_p_rule, rng, max_new_tokens, stop_at_eos, use_cache, replicas, engine)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy"})", R"("promts": ["a"], )")),
            "experiments/x.json: promts: unknown key; did you mean \"prompts\"? (known here: name, description, "
            "prompts, prompts_file, max_new_tokens, stop_at_eos, use_cache, engine, runs, record)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy"})", R"("temperature": 1, )")),
            "experiments/x.json: temperature: unknown key; temperature belongs in each entry of runs (known here: "
            "name, description, prompts, prompts_file, max_new_tokens, stop_at_eos, use_cache, engine, runs, record)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "top_candidates": 3})")).rfind(
                "experiments/x.json: runs[0].top_candidates: unknown key; top_candidates belongs in record (known here:", 0),
            0u);
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy"})", R"("record": {"top": 3}, )")),
            "experiments/x.json: record.top: unknown key (known here: top_candidates)");
}

TEST(ExperimentSpecErrors, MissingAndEmpty) {
  EXPECT_EQ(error_of(R"({"name": "x", "prompts": [], "runs": [{"mode": "greedy"}]})"),
            "experiments/x.json: prompts: empty list; give at least one prompt, e.g. [\"the river bank was\"]");
  EXPECT_EQ(error_of(R"({"name": "x", "runs": [{"mode": "greedy"}]})"),
            "experiments/x.json: prompts: missing; give a list of at least one prompt, e.g. \"prompts\": [\"the river bank was\"], "
            "or a file of them, \"prompts_file\": \"prompts.txt\"");
  EXPECT_EQ(error_of(R"({"name": "x", "prompts": ["a"], "runs": []})"),
            "experiments/x.json: runs: empty list; give at least one run entry, e.g. {\"mode\": \"greedy\"}");
  EXPECT_EQ(error_of(R"({"name": "x", "prompts": [""], "runs": [{"mode": "greedy"}]})"),
            "experiments/x.json: prompts[0] = \"\" is not allowed; allowed: a non-empty string");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temperature": [], "seed": 1})")),
            "experiments/x.json: runs[0].temperature: empty list; give at least one value (0 (greedy) or a number from 1e-30 to 1e+30 (beyond them logits / T leaves float32's range))");
  EXPECT_EQ(error_of(with_run(R"({"temperature": 1})")),
            "experiments/x.json: runs[0].mode: missing; give \"greedy\" or \"sample\"");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample"})")),
            "experiments/x.json: runs[0].seed: missing; mode \"sample\" needs a seed (a non-negative integer below 2^64 "
            "(decimal digits only)), e.g. \"seed\": 42; only first-prediction runs (max_new_tokens 0) may leave it out");
  EXPECT_EQ(error_of(R"({"name": "bad name", "prompts": ["a"], "runs": [{"mode": "greedy"}]})"),
            "experiments/x.json: name = \"bad name\" is not allowed; allowed: a string of 1 to 64 letters, digits, '_', "
            "'-' or '.', starting with a letter or digit");
}

TEST(ExperimentSpecErrors, MeaninglessCombinations) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "temperature": 0.5})")),
            "experiments/x.json: runs[0].temperature: has no effect with mode \"greedy\" (it always picks the most "
            "probable token); remove it, or use mode \"sample\"");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "top_k": 40, "seed": 1, "sampler_order": ["temperature", "top_p"]})")),
            "experiments/x.json: runs[0].sampler_order = temperature,top_p is not allowed; allowed: an order that "
            "contains top_k, since top_k is 40");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": [1, 1]})")),
            "experiments/x.json: runs[0].seed[1]: 1 repeats runs[0].seed[0]; list each value once");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy"}, {"mode": "greedy"})")).rfind(
                "experiments/x.json: runs[1]: expands to a run that runs[0] already gives (id x/p0/greedy-", 0),
            0u);
  EXPECT_EQ(error_of(with_run(R"({"mode": ["greedy", "sample"]})")),
            "experiments/x.json: runs[0].mode = [\"greedy\",\"sample\"] is not allowed; allowed: \"greedy\" or \"sample\" "
            "(one mode per run entry; write two entries)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": [[1]]})")),
            "experiments/x.json: runs[0].seed[0] = [1] is not allowed; allowed: a non-negative integer below 2^64 "
            "(decimal digits only) (lists do not nest)");
}

TEST(ExperimentSpecErrors, HugeGridsAreRefusedBeforeExpanding) {
  std::string seeds = "[";
  for (int i = 0; i < 1000; ++i) seeds += (i ? "," : "") + std::to_string(i);
  seeds += "]";
  std::string temps = "[";
  for (int i = 0; i < 1000; ++i) temps += (i ? "," : "") + std::to_string(1 + i);
  temps += "]";
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "temperature": )" + temps + R"(, "seed": )" + seeds + "}")),
            "experiments/x.json: runs: expands to 1000000 runs (prompts x each list's length), more than --max-runs "
            "100000 allows; check for a list where one value was meant, or raise --max-runs (at most 1000000) and split "
            "the work with --shard");
  // Past 2^64 the count saturates instead of wrapping to a small number that would pass. Five
  // axes of 4,600 values, not three of 70,000: the product still passes 2^64, and the test reads
  // 23,000 values instead of 211,000 (a second of CPU).
  const auto list_of = [](int n, const std::function<std::string(int)>& value) {
    std::string out = "[";
    for (int i = 0; i < n; ++i) out += (i ? "," : "") + value(i);
    return out + "]";
  };
  const int n = 4600;
  const std::string many = list_of(n, [](int i) { return std::to_string(i); });
  const std::string many_temps = list_of(n, [](int i) { return std::to_string(1 + i); });
  const std::string many_top_p = list_of(n, [](int i) { return std::to_string((i + 1) / 5000.0); });
  // 4600^5 x 6 x 2 = 2.5e19 > 2^64 = 1.8e19.
  const std::string seven_axes =
      R"({"mode": "sample", "seed": )" + many + R"(, "temperature": )" + many_temps + R"(, "top_k": )" + many +
      R"(, "top_p": )" + many_top_p + R"(, "max_new_tokens": )" + many +
      R"(, "stop_at_eos": [true, false], "sampler_order": [["temperature", "top_k", "top_p"], ["temperature", "top_p", "top_k"],
      ["top_k", "temperature", "top_p"], ["top_k", "top_p", "temperature"], ["top_p", "temperature", "top_k"],
      ["top_p", "top_k", "temperature"]]})";
  const std::string saturated = error_of(with_run(seven_axes));
  EXPECT_NE(saturated.find("expands to at least 18446744073709551615 runs"), std::string::npos) << saturated;
}

TEST(ExperimentSpecErrors, MissingFileAndDirectory) {
  try {
    load_experiment("/nonexistent/exp.json");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/exp.json: no such file; give the path of an experiment file (e.g. "
                           "experiments/article/greedy.json)");
  }
  try {
    load_experiment("/tmp");
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "/tmp: is a directory, not a file; give the path of an experiment file (e.g. "
                           "experiments/article/greedy.json)");
  }
}

TEST(ExperimentSpecErrors, TwoFilesWithOneName) {
  const auto dir = std::filesystem::temp_directory_path() / ("genrepro_spec_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  std::ofstream(a) << with_run(R"({"mode": "greedy"})");
  std::ofstream(b) << with_run(R"({"mode": "greedy"})");
  try {
    load_experiments({a, b});
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), b + ": name: \"x\" is also the name of " + a +
                                         "; run ids would collide, so give each experiment its own name");
  }
  std::filesystem::remove_all(dir);
}

TEST(ExperimentSpec, ParamsJsonRoundTrips) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.temperature = 0.1;
  p.sampling.top_k = 40;
  p.sampling.top_p = 0.9;
  p.sampling.seed = 18446744073709551615ull;
  p.sampling.sampler_order = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
  p.sampling.top_p_rule = TopPRule::hf;
  p.sampling.rng = Rng::portable;
  p.max_new_tokens = 0;
  p.use_cache = true;
  p.top_candidates = 10;
  const RunParams q = params_from_json(nlohmann::json(params_to_json(p)), "params");
  EXPECT_EQ(params_to_json(q), params_to_json(p));
  EXPECT_EQ(q.sampling.seed, p.sampling.seed);
}

TEST(ExperimentSpecErrors, NamesAreRejectedWithTheSharedWords) {
  const std::string stages = "a comma-separated list of distinct stages from {temperature, top_k, top_p}";
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "top_p_rule": "nucleus"})")),
            "experiments/x.json: runs[0].top_p_rule = nucleus is not allowed; allowed: one of {article, hf}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "top_p_rule": ["hf", "HF"]})")),
            "experiments/x.json: runs[0].top_p_rule[1] = HF is not allowed; allowed: one of {article, hf}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "top_p_rule": 3})")),
            "experiments/x.json: runs[0].top_p_rule = 3 is not allowed; allowed: one of {article, hf}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "rng": ""})")),
            "experiments/x.json: runs[0].rng =  is not allowed; allowed: one of {torch, portable}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "rng": null})")),
            "experiments/x.json: runs[0].rng = null is not allowed; allowed: one of {torch, portable}");
  // The first unknown or repeated stage, in list order; a name that is not a string comes first.
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "sampler_order": ["temperature", "temperature", "foo"]})")),
            "experiments/x.json: runs[0].sampler_order = temperature (repeated) is not allowed; allowed: " + stages);
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "sampler_order": ["foo", "temperature", "temperature"]})")),
            "experiments/x.json: runs[0].sampler_order = foo is not allowed; allowed: " + stages);
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "sampler_order": ["foo", 3]})")),
            "experiments/x.json: runs[0].sampler_order[1] = 3 is not allowed; allowed: a list of distinct stages from "
            "{temperature, top_k, top_p}");
  EXPECT_EQ(error_of(with_run(R"({"mode": "sample", "seed": 1, "sampler_order": [["temperature"], ["top_q"]]})")),
            "experiments/x.json: runs[0].sampler_order[1] = top_q is not allowed; allowed: " + stages);
}

TEST(ExperimentSpec, ParamsFromJsonRejectsUnknownNames) {
  RunParams p;
  const auto error_with = [&](const char* key, const nlohmann::json& value) {
    nlohmann::json j = nlohmann::json(params_to_json(p));
    j[key] = value;
    try {
      params_from_json(j, "runs[1].params");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  EXPECT_EQ(error_with("top_p_rule", "nucleus"),
            "runs[1].params.top_p_rule = nucleus is not allowed; allowed: one of {article, hf}");
  EXPECT_EQ(error_with("rng", "mt"), "runs[1].params.rng = mt is not allowed; allowed: one of {torch, portable}");
  EXPECT_EQ(error_with("rng", 1), "runs[1].params.rng = 1 is not allowed; allowed: a string");
  EXPECT_EQ(error_with("sampler_order", {"top_p", "min_p"}),
            "runs[1].params.sampler_order = min_p is not allowed; allowed: a comma-separated list of distinct stages "
            "from {temperature, top_k, top_p}");
  EXPECT_EQ(error_with("sampler_order", {"top_p", 2}), "runs[1].params.sampler_order: 2 is not a stage name");
  EXPECT_EQ(error_with("sampler_order", nlohmann::json::array()), "no throw");  // an empty chain is a valid plan
}

TEST(ExperimentSpec, ParamsJsonWritesTheNames) {
  RunParams p;
  p.sampling.sampler_order = {SamplerStage::top_p, SamplerStage::temperature};
  p.sampling.top_p_rule = TopPRule::hf;
  p.sampling.rng = Rng::portable;
  EXPECT_EQ(params_to_json(p).dump(),
            R"({"mode":"greedy","temperature":1.0,"top_k":0,"top_p":1.0,"seed":0,"sampler_order":["top_p","temperature"],)"
            R"("top_p_rule":"hf","rng":"portable","max_new_tokens":50,"stop_at_eos":true,"use_cache":false,"top_candidates":5})");
  EXPECT_EQ(params_to_json(RunParams{}).dump(),
            R"({"mode":"greedy","temperature":1.0,"top_k":0,"top_p":1.0,"seed":0,"sampler_order":["temperature","top_k","top_p"],)"
            R"("top_p_rule":"article","rng":"torch","max_new_tokens":50,"stop_at_eos":true,"use_cache":false,"top_candidates":5})");
}

// --top-candidates: the override is the file with record.top_candidates edited, run for run.
constexpr const char* kOverrideText = R"({
  "name": "o", "prompts": ["the river bank was", "hello"], "max_new_tokens": [0, 3],
  "runs": [{"mode": "greedy"}, {"mode": "sample", "temperature": [0.5, 2], "seed": 7, "rng": ["torch", "portable"]}]
})";

TEST(OverrideTopCandidates, IsTheFileWithRecordEdited) {
  ExperimentSpec overridden = parse_experiment(kOverrideText, kPath);
  const std::string sha = overridden.sha256;
  override_top_candidates(overridden, 2);
  nlohmann::json edited = parse_experiment(kOverrideText, kPath).spec;
  edited["record"]["top_candidates"] = 2;
  const ExperimentSpec expected = parse_experiment(edited.dump(2), kPath);
  EXPECT_EQ(overridden.sha256, sha);  // still the file's bytes
  EXPECT_EQ(overridden.spec, expected.spec);
  EXPECT_EQ(overridden.spec.dump(), expected.spec.dump());
  EXPECT_EQ(overridden.spec["record"]["top_candidates"], 2);
  ASSERT_EQ(overridden.runs.size(), expected.runs.size());
  ASSERT_EQ(overridden.runs.size(), 20u);
  const ExperimentSpec original = parse_experiment(kOverrideText, kPath);
  for (size_t i = 0; i < expected.runs.size(); ++i) {
    EXPECT_EQ(overridden.runs[i].id, expected.runs[i].id) << i;
    EXPECT_NE(overridden.runs[i].id, original.runs[i].id) << i;  // ids hash top_candidates too
    EXPECT_EQ(params_to_json(overridden.runs[i].params), params_to_json(expected.runs[i].params)) << i;
    EXPECT_EQ(overridden.runs[i].params.top_candidates, 2) << i;
    EXPECT_EQ(overridden.runs[i].value_paths, expected.runs[i].value_paths) << i;
    EXPECT_EQ(overridden.runs[i].source, expected.runs[i].source) << i;
  }
}

TEST(OverrideTopCandidates, ReplacesARecordTheFileGave) {
  const std::string text = with_run(R"({"mode": "greedy"})", R"("record": {"top_candidates": 9}, )");
  ExperimentSpec s = parse_experiment(text, kPath);
  override_top_candidates(s, 0);
  EXPECT_EQ(s.spec["record"].dump(), R"({"top_candidates":0})");
  EXPECT_EQ(s.runs[0].params.top_candidates, 0);
  const std::string zero = with_run(R"({"mode": "greedy"})", R"("record": {"top_candidates": 0}, )");
  EXPECT_EQ(s.runs[0].id, parse_experiment(zero, kPath).runs[0].id);
}

TEST(OverrideTopCandidates, RefusesANegativeCount) {
  ExperimentSpec s = parse_experiment(kOverrideText, kPath);
  try {
    override_top_candidates(s, -1);
    FAIL() << "no throw";
  } catch (const SpecError& e) {
    EXPECT_STREQ(e.what(), "experiments/x.json: record.top_candidates = -1 is not allowed; allowed: an integer >= 0");
  }
  EXPECT_FALSE(s.spec.contains("record"));  // untouched
}

TEST(NearestKey, SuggestsOnlyPlausibleTypos) {
  const std::vector<std::string> known = {"temperature", "top_k", "top_p", "seed"};
  EXPECT_EQ(nearest_key("temprature", known), "temperature");
  EXPECT_EQ(nearest_key("top-k", known), "top_k");
  EXPECT_EQ(nearest_key("sede", known), "seed");  // adjacent swap counts as one edit
  EXPECT_EQ(nearest_key("completely_different", known), "");
}

TEST(JsonText, LineColumnCountsFromOne) {
  EXPECT_EQ(line_column("ab\ncd", 0), "line 1, column 1");
  EXPECT_EQ(line_column("ab\ncd", 4), "line 2, column 2");
}

}  // namespace
}  // namespace genrepro
