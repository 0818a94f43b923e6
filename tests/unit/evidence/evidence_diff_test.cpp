// diff on small hand-made evidence: every verdict, the divergence report, the precedence, bad
// input messages. The distributions are written out by hand so each expected verdict can be
// checked against docs/diff.md on paper.
#include "evidence/evidence_diff.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "evidence/evidence.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using Json = EvidenceJson;
using ::testing::HasSubstr;

// A step whose final distribution equals its unfiltered one (T = 1, no filter) unless the
// caller overrides top[].prob. `top` is {id, prob} by descending probability; `chosen` is the
// token drawn or picked.
Json make_step(int64_t k, int64_t chosen, const std::vector<std::pair<int64_t, double>>& top, int64_t kept = 1) {
  Json list = Json::array();
  double sum = 0, entropy = 0, chosen_p = 0;
  for (const auto& [id, p] : top) {
    list.push_back(Json{{"id", id}, {"text", " t" + std::to_string(id)}, {"prob", p}, {"prob_scaled", p}});
    sum += p;
    entropy -= p * std::log(p);
    if (id == chosen) chosen_p = p;
  }
  return Json{{"step", k},
              {"token_id", chosen},
              {"token_text", " t" + std::to_string(chosen)},
              {"prob", chosen_p},
              {"prob_t1", chosen_p},
              {"kept", kept},
              {"top", list},
              {"rest_mass", 1 - sum},
              {"margin", top.size() > 1 ? top[0].second - top[1].second : top[0].second},
              {"logit_margin", top.size() > 1 ? std::log(top[0].second / top[1].second) : 0.0},
              {"entropy", entropy}};
}

Json make_params(const std::string& mode) {
  return Json{{"mode", mode},          {"temperature", 1.0},   {"top_k", 0},
              {"top_p", 1.0},          {"seed", 42},           {"sampler_order", {"temperature", "top_k", "top_p"}},
              {"top_p_rule", "article"}, {"rng", "torch"},     {"max_new_tokens", 3},
              {"stop_at_eos", true},   {"use_cache", false},   {"top_candidates", 5}};
}

Json make_run(const std::string& id, const std::string& mode, const std::vector<Json>& steps) {
  Json out_ids = Json::array();
  std::string continuation;
  for (const Json& s : steps) {
    out_ids.push_back(s["token_id"]);
    continuation += s["token_text"].get<std::string>();
  }
  return Json{{"id", id},
              {"experiment", "exp"},
              {"index", 0},
              {"prompt_index", 0},
              {"prompt", "the river bank was"},
              {"params", make_params(mode)},
              {"prompt_ids", {1169, 7850, 3331, 373}},
              {"output_ids", out_ids},
              {"text", "the river bank was" + continuation},
              {"continuation", continuation},
              {"stop", {{"reason", "max_new_tokens"}, {"step", static_cast<int64_t>(steps.size())}}},
              {"steps", steps},
              {"timing", {{"seconds", 0.5}, {"tokens_per_second", 6.0}}}};
}

Json make_doc(const std::vector<Json>& runs) {
  return Json{{"schema", "genrepro.evidence/1"},
              {"genrepro", {{"version", "0.1.0"}, {"git_commit", "abc"}}},
              {"created_utc", "2026-01-01T00:00:00Z"},
              {"environment",
               {{"libtorch_version", "1.13.0"},
                {"cpu_capability", "AVX2"},
                {"threads", {{"intra_op", 1}, {"inter_op", 1}, {"omp_max", 1}, {"runs_concurrently", 1}}}}},
              {"model", {{"source", "fixture"}, {"path", "/tmp/a"}, {"eos_token_id", 50256}}},
              {"experiments", Json::array()},
              {"runs", runs}};
}

// Three greedy steps with clear winners: the baseline most tests change one thing in.
std::vector<Json> greedy_steps() {
  return {make_step(0, 10, {{10, 0.6}, {11, 0.3}}), make_step(1, 20, {{20, 0.5}, {21, 0.2}}),
          make_step(2, 30, {{30, 0.7}, {31, 0.2}})};
}

EvidenceDiff diff_docs(const Json& golden, const Json& current, double tol = kDefaultProbTolerance) {
  return diff_evidence({EvidenceFile{"golden.json", golden}}, EvidenceFile{"new.json", current}, EvidenceDiffOptions{tol});
}

// A copy: callers often pass a temporary EvidenceDiff.
RunDiff only_run(const EvidenceDiff& d) {
  EXPECT_EQ(d.runs.size(), 1u);
  return d.runs.empty() ? RunDiff{} : d.runs.front();
}

TEST(EvidenceDiff, IdenticalEvidenceAgrees) {
  const Json doc = make_doc({make_run("a", "greedy", greedy_steps()), make_run("b", "sample", greedy_steps())});
  const EvidenceDiff d = diff_docs(doc, doc);
  EXPECT_TRUE(d.agree());
  EXPECT_EQ(d.differing(), 0u);
  EXPECT_TRUE(d.environment.empty());
  EXPECT_EQ(diff_summary_line(d), "diff: 2 runs compared, 2 agree, 0 differ; 0 missing, 0 extra; prob tolerance 0.0001");
}

TEST(EvidenceDiff, OneTokenChangeIsReportedWithStepBothTokensAndMargin) {
  std::vector<Json> changed = greedy_steps();
  changed[2] = make_step(2, 31, {{30, 0.7}, {31, 0.2}});  // same distribution, the runner-up picked
  const EvidenceDiff d = diff_docs(make_doc({make_run("a", "greedy", greedy_steps())}),
                                   make_doc({make_run("a", "greedy", changed)}));
  EXPECT_FALSE(d.agree());
  const RunDiff& r = only_run(d);
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->step, 2);
  EXPECT_EQ(r.divergence->golden.id, 30);
  EXPECT_EQ(r.divergence->current.id, 31);
  EXPECT_DOUBLE_EQ(*r.divergence->golden.prob_in_golden, 0.7);
  EXPECT_DOUBLE_EQ(*r.divergence->current.prob_in_golden, 0.2);
  EXPECT_DOUBLE_EQ(*r.divergence->golden_margin, 0.7 - 0.2);
  // Greedy cannot pick the runner-up of an unchanged distribution unless the picker changed.
  EXPECT_EQ(r.verdict, Verdict::sampler_change);
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("run a: sampler/RNG change at step 2"));
  EXPECT_THAT(text, HasSubstr("golden token: 30 \" t30\"  p(golden) 0.7  p(new) 0.7"));
  EXPECT_THAT(text, HasSubstr("new token:    31 \" t31\"  p(golden) 0.2  p(new) 0.2"));
  EXPECT_THAT(text, HasSubstr("margin (best - second): golden 0.5, new 0.5"));
  EXPECT_THAT(text, HasSubstr("diff: 1 runs compared, 0 agree, 1 differ (1 sampler/RNG change)"));
}

// Golden picks 20 over 21 by 3e-5, the new build by 2e-5 the other way: both within 1e-4.
std::pair<Json, Json> near_tie_pair() {
  std::vector<Json> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.40003}, {21, 0.40000}});
  n[1] = make_step(1, 21, {{21, 0.40002}, {20, 0.39999}});
  return {make_doc({make_run("a", "greedy", g)}), make_doc({make_run("a", "greedy", n)})};
}

TEST(EvidenceDiff, FlipWithinToleranceIsANearTie) {
  const auto [g, n] = near_tie_pair();
  const EvidenceDiff d = diff_docs(g, n);
  const RunDiff& r = only_run(d);
  EXPECT_EQ(r.verdict, Verdict::near_tie) << r.reason;
  ASSERT_TRUE(r.divergence.has_value());
  EXPECT_EQ(r.divergence->step, 1);
  EXPECT_DOUBLE_EQ(*r.divergence->golden.prob_in_golden, 0.40003);
  EXPECT_DOUBLE_EQ(*r.divergence->golden.prob_in_new, 0.39999);
  EXPECT_DOUBLE_EQ(*r.divergence->current.prob_in_golden, 0.40000);
  EXPECT_DOUBLE_EQ(*r.divergence->current.prob_in_new, 0.40002);
  EXPECT_THAT(format_diff_text(d), HasSubstr("run a: near-tie at step 1"));
}

TEST(EvidenceDiff, SameFlipBeyondATighterToleranceIsARegression) {
  // With --prob-tolerance 1e-6 the 4e-5 move of token 20 is itself a change of the model.
  const auto [g, n] = near_tie_pair();
  const RunDiff& r = only_run(diff_docs(g, n, 1e-6));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("model's distribution changed beyond tolerance at step 1"));
}

TEST(EvidenceDiff, ChangedTopPIsAKeptSetChange) {
  std::vector<Json> g = greedy_steps(), n = greedy_steps();
  g[0] = make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 35);
  n[0] = make_step(0, 10, {{10, 0.6}, {11, 0.3}}, 20);
  n[0]["top"][0]["prob"] = 0.65;  // renormalized over the smaller nucleus
  n[0]["prob"] = 0.65;
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}}, 20);
  Json gr = make_run("a", "sample", g), nr = make_run("a", "sample", n);
  gr["params"]["top_p"] = 0.9;
  nr["params"]["top_p"] = 0.8;
  const RunDiff& r = only_run(diff_docs(make_doc({gr}), make_doc({nr})));
  EXPECT_EQ(r.verdict, Verdict::kept_set_change) << r.reason;
  EXPECT_EQ(r.first_difference_step, 0);
  ASSERT_EQ(r.params.size(), 1u);
  EXPECT_EQ(r.params[0].path, "params.top_p");
  EXPECT_THAT(r.reason, HasSubstr("top_p 0.9 -> 0.8"));
}

TEST(EvidenceDiff, KeptSizeMovingWithSameParamsIsAKeptSetChange) {
  std::vector<Json> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.5}, {21, 0.2}}, 35);
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}}, 36);
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "sample", g)}), make_doc({make_run("a", "sample", n)})));
  EXPECT_EQ(r.verdict, Verdict::kept_set_change) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("kept set differs at step 1 (35 vs 36 tokens)"));
}

TEST(EvidenceDiff, SameDistributionDifferentDrawIsASamplerChange) {
  std::vector<Json> n = greedy_steps();
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}});
  const RunDiff& r =
      only_run(diff_docs(make_doc({make_run("a", "sample", greedy_steps())}), make_doc({make_run("a", "sample", n)})));
  EXPECT_EQ(r.verdict, Verdict::sampler_change) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("bit-identical"));
  EXPECT_EQ(r.divergence->step, 1);
}

TEST(EvidenceDiff, SampledTieWithBitIdenticalDistributionIsNotANearTie) {
  // The two tokens are 3e-5 apart, but the distribution did not move at all: only the RNG can
  // have drawn differently.
  std::vector<Json> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.40003}, {21, 0.40000}});
  n[1] = make_step(1, 21, {{20, 0.40003}, {21, 0.40000}});
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "sample", g)}), make_doc({make_run("a", "sample", n)})));
  EXPECT_EQ(r.verdict, Verdict::sampler_change) << r.reason;
}

TEST(EvidenceDiff, ChangedSeedIsASamplerChange) {
  std::vector<Json> n = greedy_steps();
  n[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}});
  Json nr = make_run("a", "sample", n);
  nr["params"]["seed"] = 43;
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "sample", greedy_steps())}), make_doc({nr})));
  EXPECT_EQ(r.verdict, Verdict::sampler_change) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("seed 42 -> 43"));
}

TEST(EvidenceDiff, ProbabilitiesBeyondToleranceWithSameTokensAreARegression) {
  std::vector<Json> n = greedy_steps();
  n[0] = make_step(0, 10, {{10, 0.55}, {11, 0.35}});
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "greedy", greedy_steps())}), make_doc({make_run("a", "greedy", n)})));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_EQ(r.first_difference_step, 0);
  EXPECT_FALSE(r.divergence.has_value());
  EXPECT_NEAR(r.max_prob_difference, 0.1, 1e-12);  // the margin moved from 0.3 to 0.2
  ASSERT_FALSE(r.fields.empty());
  EXPECT_EQ(r.fields[0].path, "steps[0].top[id=10].prob_scaled");
}

TEST(EvidenceDiff, RegressionThatFlipsCloseCandidatesIsStillARegression) {
  std::vector<Json> g = greedy_steps(), n = greedy_steps();
  g[1] = make_step(1, 20, {{20, 0.40003}, {21, 0.40000}});
  n[1] = make_step(1, 21, {{21, 0.42}, {20, 0.38}});
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "greedy", g)}), make_doc({make_run("a", "greedy", n)})));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_EQ(r.divergence->step, 1);
}

TEST(EvidenceDiff, MissingAndExtraRunsAreReported) {
  const EvidenceDiff d = diff_docs(make_doc({make_run("a", "greedy", greedy_steps()), make_run("b", "greedy", greedy_steps())}),
                                   make_doc({make_run("b", "greedy", greedy_steps()), make_run("c", "greedy", greedy_steps())}));
  EXPECT_FALSE(d.agree());
  EXPECT_EQ(d.missing, std::vector<std::string>{"a"});
  EXPECT_EQ(d.extra, std::vector<std::string>{"c"});
  EXPECT_EQ(d.differing(), 0u);
  const std::string text = format_diff_text(d);
  EXPECT_THAT(text, HasSubstr("missing run a: in golden, not in the new evidence"));
  EXPECT_THAT(text, HasSubstr("extra run c: in the new evidence, not in golden"));
  EXPECT_THAT(text, HasSubstr("diff: 1 runs compared, 1 agree, 0 differ; 1 missing, 1 extra"));
}

TEST(EvidenceDiff, EnvironmentDifferencesAreListedNotCounted) {
  const Json g = make_doc({make_run("a", "greedy", greedy_steps())});
  Json n = g;
  n["environment"]["libtorch_version"] = "2.8.0";
  n["environment"]["threads"]["runs_concurrently"] = 2;  // volatile: ignored
  n["created_utc"] = "2027-01-01T00:00:00Z";            // volatile: ignored
  n["runs"][0]["timing"]["seconds"] = 9.0;               // volatile: ignored
  n["model"]["path"] = "/elsewhere";                    // where, not what: ignored
  const EvidenceDiff d = diff_docs(g, n);
  EXPECT_TRUE(d.agree());
  ASSERT_EQ(d.environment.size(), 1u);
  EXPECT_EQ(d.environment[0].path, "environment.libtorch_version");
  EXPECT_TRUE(d.provenance.empty());
  EXPECT_THAT(format_diff_text(d), HasSubstr("environment differs (likely causes, not failures):\n  environment.libtorch_version: \"1.13.0\" -> \"2.8.0\""));
}

TEST(EvidenceDiff, ShorterMaxNewTokensIsAParameterChange) {
  std::vector<Json> n = greedy_steps();
  n.pop_back();
  Json nr = make_run("a", "greedy", n);
  nr["params"]["max_new_tokens"] = 2;
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "greedy", greedy_steps())}), make_doc({nr})));
  EXPECT_EQ(r.verdict, Verdict::params_change) << r.reason;
  EXPECT_EQ(r.divergence->step, 2);
  EXPECT_FALSE(r.divergence->current.id.has_value());
}

TEST(EvidenceDiff, SameIdsDifferentTextIsARegression) {
  Json nr = make_run("a", "greedy", greedy_steps());
  nr["text"] = "the river bank was!";
  const RunDiff& r = only_run(diff_docs(make_doc({make_run("a", "greedy", greedy_steps())}), make_doc({nr})));
  EXPECT_EQ(r.verdict, Verdict::regression) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("decoded text"));
}

TEST(EvidenceDiff, NonFiniteProbabilityNeverPassesAsWithinTolerance) {
  // evidence.cpp writes NaN as the string "NaN"; NaN - 0.5 is NaN, which a plain "<= tol" test
  // would let through.
  Json g = make_doc({make_run("a", "greedy", greedy_steps())});
  Json n = g;
  n["runs"][0]["steps"][0]["entropy"] = "NaN";
  const RunDiff r = only_run(diff_docs(g, n));
  EXPECT_NE(r.verdict, Verdict::agree);
  EXPECT_EQ(r.first_difference_step, 0);
  g["runs"][0]["steps"][0]["entropy"] = "NaN";
  EXPECT_TRUE(diff_docs(g, n).agree());
}

TEST(CacheEquivalence, PairsRunsByPositionAndFailsOnlyOnTokens) {
  Json recompute = make_doc({make_run("a/use_cache-0", "greedy", greedy_steps())});
  Json cached = make_doc({make_run("a/use_cache-1", "greedy", greedy_steps())});
  cached["runs"][0]["params"]["use_cache"] = true;
  cached["runs"][0]["steps"][0]["top"][1]["prob_scaled"] = 0.3 + 3e-7;  // another matmul shape's rounding
  EvidenceDiff d = diff_cache_equivalence(EvidenceFile{"r.json", recompute}, EvidenceFile{"c.json", cached}, {});
  EXPECT_TRUE(d.agree());
  EXPECT_TRUE(tokens_equivalent(d));

  std::vector<Json> flipped = greedy_steps();
  flipped[1] = make_step(1, 21, {{20, 0.5}, {21, 0.2}});
  cached["runs"][0]["steps"] = flipped;
  d = diff_cache_equivalence(EvidenceFile{"r.json", recompute}, EvidenceFile{"c.json", cached}, {});
  EXPECT_FALSE(tokens_equivalent(d));
  ASSERT_TRUE(d.runs[0].divergence.has_value());
  EXPECT_EQ(d.runs[0].divergence->step, 1);
  EXPECT_TRUE(d.runs[0].params.empty()) << "use_cache must not be reported as a parameter difference";

  cached["runs"].push_back(cached["runs"][0]);
  try {
    diff_cache_equivalence(EvidenceFile{"r.json", recompute}, EvidenceFile{"c.json", cached}, {});
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("2 runs with the KV cache but 1 with recompute"));
  }
}

TEST(EvidenceDiff, JsonReportHasTheDocumentedShape) {
  const auto [g, n] = near_tie_pair();
  const Json j = diff_to_json(diff_docs(g, n));
  EXPECT_EQ(j["schema"], "genrepro.diff/1");
  EXPECT_EQ(j["agree"], false);
  EXPECT_EQ(j["summary"]["compared"], 1);
  EXPECT_EQ(j["summary"]["differ"], 1);
  EXPECT_EQ(j["summary"]["verdicts"]["near_tie"], 1);
  const Json& run = j["runs"][0];
  EXPECT_EQ(run["verdict"], "near_tie");
  EXPECT_EQ(run["divergence"]["step"], 1);
  EXPECT_EQ(run["divergence"]["golden"]["token_id"], 20);
  EXPECT_EQ(run["divergence"]["new"]["token_id"], 21);
  EXPECT_DOUBLE_EQ(run["divergence"]["margin"]["golden"].get<double>(), 0.40003 - 0.40000);
}

TEST(EvidenceDiff, StripVolatileFieldsRemovesOnlyThem) {
  const Json s = strip_volatile(make_doc({make_run("a", "greedy", greedy_steps())}));
  EXPECT_FALSE(s.contains("created_utc"));
  EXPECT_FALSE(s["runs"][0].contains("timing"));
  EXPECT_FALSE(s["environment"]["threads"].contains("runs_concurrently"));
  EXPECT_EQ(s["environment"]["threads"]["intra_op"], 1);
  EXPECT_TRUE(s["runs"][0].contains("steps"));
}

TEST(EvidenceDiff, NegativeToleranceIsRejected) {
  const Json doc = make_doc({});
  EXPECT_THROW(
      {
        try {
          diff_docs(doc, doc, -1);
        } catch (const UsageError& e) {
          EXPECT_THAT(e.what(), HasSubstr("--prob-tolerance"));
          throw;
        }
      },
      UsageError);
}

// ---------- reading files ----------

class EvidenceFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("genrepro_diff_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const EvidenceError& e) {
      return e.what();
    }
    return "(no EvidenceError)";
  }
  fs::path dir_;
};

TEST_F(EvidenceFiles, BadFilesNameTheFileAndTheProblem) {
  const std::string missing = (dir_ / "nope.json").string();
  EXPECT_EQ(error_of([&] { load_evidence_json(missing); }),
            missing + ": no such file; give an evidence file written by 'genrepro run'");
  const std::string not_json = write("not.json", "{\"schema\": ");
  EXPECT_THAT(error_of([&] { load_evidence_json(not_json); }), HasSubstr(not_json + ": invalid JSON: parse error at line 1, column 12"));
  const std::string no_schema = write("noschema.json", "{\"runs\": []}");
  EXPECT_THAT(error_of([&] { load_evidence_json(no_schema); }), HasSubstr("not genrepro evidence (no top-level \"schema\" key)"));
  const std::string old = write("old.json", "{\"schema\": \"genrepro.evidence/0\", \"runs\": []}");
  EXPECT_EQ(error_of([&] { load_evidence_json(old); }),
            old + ": schema string \"genrepro.evidence/0\", this build reads \"genrepro.evidence/1\"; regenerate the evidence "
                  "with this genrepro (or use the genrepro that wrote it)");
}

TEST_F(EvidenceFiles, BadFieldNamesItsJsonPath) {
  Json doc = make_doc({make_run("a", "greedy", greedy_steps())});
  Json bad = doc;
  bad["runs"][0]["steps"][1]["top"][0]["prob"] = "high";
  const EvidenceFile g{"golden.json", doc};
  const EvidenceFile n{"new.json", bad};
  EXPECT_THAT(error_of([&] { diff_evidence({g}, n, {}); }),
              HasSubstr("new.json: runs[0].steps[1].top[0].prob: expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), found string \"high\""));
  bad = doc;
  bad["runs"][0].erase("stop");
  EXPECT_THAT(error_of([&] { diff_evidence({g}, EvidenceFile{"new.json", bad}, {}); }),
              HasSubstr("new.json: runs[0].stop: expected a value, found nothing (the key is missing)"));
}

TEST_F(EvidenceFiles, GoldenDirectoryPoolsRunsAndRejectsOverlaps) {
  write("golden/a.json", make_doc({make_run("a", "greedy", greedy_steps())}).dump());
  write("golden/b.json", make_doc({make_run("b", "greedy", greedy_steps())}).dump());
  write("golden/.b.json.tmp", "not evidence: hidden files are skipped");
  const std::vector<EvidenceFile> golden = load_golden((dir_ / "golden").string());
  ASSERT_EQ(golden.size(), 2u);
  const EvidenceFile current{"new.json", make_doc({make_run("b", "greedy", greedy_steps()), make_run("a", "greedy", greedy_steps())})};
  EXPECT_TRUE(diff_evidence(golden, current, {}).agree());

  write("golden/c.json", make_doc({make_run("a", "greedy", greedy_steps())}).dump());
  EXPECT_THAT(error_of([&] { load_golden((dir_ / "golden").string()); }),
              HasSubstr("c.json: run id \"a\" is also in " + (dir_ / "golden" / "a.json").string()));
  fs::create_directories(dir_ / "empty");
  EXPECT_THAT(error_of([&] { load_golden((dir_ / "empty").string()); }), HasSubstr("golden directory holds no *.json evidence files"));
}

TEST_F(EvidenceFiles, DuplicateIdsInOneFileAreRejected) {
  const std::string p = write("dup.json", make_doc({make_run("a", "greedy", greedy_steps()), make_run("a", "greedy", greedy_steps())}).dump());
  EXPECT_THAT(error_of([&] { load_evidence_json(p); }), HasSubstr("run id \"a\" appears twice (runs[0] and runs[1])"));
}

}  // namespace
}  // namespace genrepro
