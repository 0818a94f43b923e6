// check-article against golden/article/article-facts.json: the facts file holds the article's
// published numbers; evidence that reproduces them passes, fixture evidence fails clearly.
#include "golden/article_check.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "unit/evidence/evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;

const std::string kFactsPath = std::string(GENREPRO_SOURCE_DIR) + "/golden/article/article-facts.json";

// The text as GPT-2 wrote it, before the article's typesetting: ASCII apostrophes, "\n\n".
std::string as_gpt2_wrote_it(const std::string& printed) {
  std::string out;
  for (std::size_t i = 0; i < printed.size(); ++i) {
    if (printed.compare(i, 3, "\xE2\x80\x99") == 0) {
      out += '\'';
      i += 2;
    } else if (printed[i] == '\n') {
      out += "\n\n";
    } else {
      out += printed[i];
    }
  }
  return out;
}

RunParams article_params(const OrderedJson& fact_params) {
  RunParams p;
  p.sampling.mode = fact_params["mode"] == "greedy" ? DecodeMode::greedy : DecodeMode::sample;
  p.sampling.temperature = fact_params.value("temperature", 1.0);
  p.sampling.top_p = fact_params.value("top_p", 1.0);
  p.sampling.seed = fact_params.value("seed", 0);
  p.max_new_tokens = fact_params["max_new_tokens"].get<int64_t>();
  return p;
}

// Step 0's nucleus size: a run with the facts' T and p has the published size there.
int64_t first_kept(const OrderedJson& facts, const OrderedJson& params) {
  for (const OrderedJson& n : facts["nucleus_sizes"])
    if (params.value("temperature", 1.0) == n["temperature"] && params.value("top_p", 1.0) == n["top_p"]) return n["kept"];
  return 1;
}

// A generation of `new_tokens` tokens that reads `text` and stops for `reason`.
RunRecord generation(const std::string& id, const std::string& prompt, const RunParams& params, const std::string& text,
                     StopReason reason, int64_t new_tokens, int64_t first_kept) {
  std::vector<StepRecord> steps;
  for (int64_t k = 0; k < new_tokens; ++k) steps.push_back(test::make_step(k, 1, {{1, 0.5}}, k == 0 ? first_kept : 1));
  RunRecord r = test::make_run(id, params.sampling.mode, steps, "article");
  r.prompt = prompt;
  r.params = params;
  r.text = text;
  r.result.stop_reason = reason;
  return r;
}

// max_new_tokens 0: the first prediction alone, listing EOS among its candidates.
RunRecord first_prediction(const std::string& id, const std::string& prompt, const RunParams& params, int64_t kept) {
  RunRecord r = test::make_run(id, params.sampling.mode, {}, "article");
  r.prompt = prompt;
  r.params = params;
  StepRecord s;
  s.kept = kept;
  s.top = {Candidate{50256, "<|endoftext|>", 0.0, 0.0}};
  r.result.steps = {s};
  return r;
}

// Evidence that reproduces every fact.
Evidence reproducing_evidence(const OrderedJson& facts) {
  const std::string prompt = facts["prompt"];
  std::vector<RunRecord> runs;
  for (const OrderedJson& g : facts["generations"])
    runs.push_back(generation("article/" + g["name"].get<std::string>(), prompt, article_params(g["params"]),
                              as_gpt2_wrote_it(g["text"].get<std::string>()),
                              g["stop"]["reason"] == "eos" ? StopReason::eos : StopReason::max_new_tokens,
                              g["stop"]["step"].get<int64_t>(), first_kept(facts, g["params"])));
  for (const OrderedJson& n : facts["nucleus_sizes"]) {
    const OrderedJson p{{"mode", "sample"}, {"temperature", n["temperature"]}, {"top_p", n["top_p"]}, {"seed", 42}, {"max_new_tokens", 0}};
    runs.push_back(first_prediction("article/nucleus-" + n["temperature"].dump(), prompt, article_params(p), n["kept"].get<int64_t>()));
  }
  Evidence e = test::make_evidence(runs);
  e.model.source = "hf-dir";
  return e;
}

const FactCheck& fact(const ArticleCheck& c, const std::string& name) {
  for (const FactCheck& f : c.facts)
    if (f.fact == name) return f;
  ADD_FAILURE() << "no fact " << name;
  return c.facts.front();
}

TEST(ArticleFacts, HoldTheArticlesPublishedNumbers) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  EXPECT_EQ(facts["eos"]["token_id"], 50256);
  EXPECT_EQ(facts["eos"]["text"], "<|endoftext|>");
  EXPECT_EQ(facts["prompt"], "the river bank was");
  ASSERT_EQ(facts["nucleus_sizes"].size(), 3u);
  EXPECT_EQ(facts["nucleus_sizes"][0]["kept"], 35);
  EXPECT_EQ(facts["nucleus_sizes"][1]["kept"], 1279);
  EXPECT_EQ(facts["nucleus_sizes"][2]["kept"], 14905);
  EXPECT_EQ(facts["recorded_environment"]["pytorch"], "2.8.0");
  EXPECT_EQ(facts["recorded_environment"]["transformers"], "4.57.6");
  ASSERT_EQ(facts["generations"].size(), 7u);
  const OrderedJson& eos_run = facts["generations"][6];
  EXPECT_EQ(eos_run["params"]["seed"], 43);
  EXPECT_EQ(eos_run["stop"]["reason"], "eos");
  EXPECT_EQ(eos_run["stop"]["step"], 47);
  const std::string text = eos_run["text"].get<std::string>();
  EXPECT_EQ(text.substr(text.size() - 13), "<|endoftext|>");
  // "At T=0.001, this run matches the greedy output exactly."
  EXPECT_EQ(facts["generations"][0]["text"], facts["generations"][1]["text"]);
}

TEST(ArticleCheck, NormalizationUndoesTheArticlesTypesetting) {
  EXPECT_EQ(normalize_article_text("The city\xE2\x80\x99s water\n\nsupply\n"), "The city's water\nsupply\n");
}

TEST(ArticleCheck, EvidenceThatReproducesTheArticlePasses) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", reproducing_evidence(facts)});
  EXPECT_TRUE(c.passed()) << format_article_check(c);
  EXPECT_EQ(c.count(FactStatus::mismatch, false), 0u);
  EXPECT_EQ(fact(c, "nucleus T=1 p=0.9 at new token 1 (steps[0])").found, "1279");
  EXPECT_EQ(fact(c, "stop top-p-0.9-seed-43-eos").found, "eos at new token 47");
  EXPECT_THAT(fact(c, "text greedy").note, HasSubstr("match after typography normalization"));
  EXPECT_EQ(fact(c, "eos token text").status, FactStatus::match);
  EXPECT_THAT(format_article_check(c), HasSubstr("the evidence reproduces the article"));
}

TEST(ArticleCheck, OnlyTheArticlesSamplerConfigurationIsMatched) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  Evidence e = reproducing_evidence(facts);
  // The same T and p with temperature applied last (llama.cpp's order) is another experiment:
  // its nucleus size must not be checked against the article's.
  RunRecord other = e.runs[7];
  other.id = "sampler_order/temperature-last";
  other.params.sampling.sampler_order = {SamplerStage::top_k, SamplerStage::top_p, SamplerStage::temperature};
  other.result.steps[0].kept = 4;
  e.runs.push_back(other);
  // A chain without top_p does not filter, whatever params.top_p says.
  e.runs[2].params.sampling.sampler_order = {SamplerStage::temperature};
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_TRUE(c.passed()) << format_article_check(c);
  EXPECT_EQ(fact(c, "nucleus T=0.5 p=0.9 at new token 1 (steps[0])").found, "35");
}

TEST(ArticleCheck, OneChangedTextIsAMismatchShowingWhere) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  Evidence e = reproducing_evidence(facts);
  e.runs[2].text = "the river bank was solid and empty a few weeks in advance.";
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_FALSE(c.passed());
  const FactCheck& f = fact(c, "text temperature-1-seed-42");
  EXPECT_EQ(f.status, FactStatus::mismatch);
  EXPECT_THAT(f.note, HasSubstr("first difference at byte 41"));
  EXPECT_THAT(f.found, HasSubstr("weeks"));
}

TEST(ArticleCheck, JsonCarriesTheVerdictCountsAndEveryFact) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  Evidence e = reproducing_evidence(facts);
  e.runs[2].text = "the river bank was solid and empty a few weeks in advance.";
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  const OrderedJson j = article_check_to_json(c);
  EXPECT_EQ(j["schema"], "genrepro.article-check/1");
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["counted"]["mismatch"], 1);
  EXPECT_EQ(j["facts"].size(), c.facts.size());
  bool found = false;
  for (const auto& f : j["facts"])
    if (f["fact"] == "text temperature-1-seed-42") {
      found = true;
      EXPECT_EQ(f["status"], "mismatch");
      EXPECT_THAT(f["note"].get<std::string>(), HasSubstr("first difference at byte 41"));
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(article_check_to_json(check_article(facts, kFactsPath, EvidenceFile{"e.json", reproducing_evidence(facts)}))["passed"],
            true);
}

TEST(ArticleCheck, RunsOnAnUnprintedSeedAreShownButNotCounted) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  Evidence e = reproducing_evidence(facts);
  e.runs[4].text = "the river bank was something else";  // top-p run 1: seed assumed
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(fact(c, "text top-p-0.9-run-1").status, FactStatus::mismatch);
  EXPECT_FALSE(fact(c, "text top-p-0.9-run-1").counted);
}

TEST(ArticleCheck, FixtureEvidenceFailsWithAClearTable) {
  const OrderedJson facts = load_article_facts(kFactsPath);
  Evidence e = reproducing_evidence(facts);
  e.model.source = "fixture";
  for (RunRecord& r : e.runs) {
    r.text = "the river bank was noise";
    r.result.stop_reason = StopReason::max_new_tokens;
    r.result.stop_step = r.params.max_new_tokens;
    r.result.steps[0].kept = 3;  // every nucleus size wrong, and consistently so
  }
  e.runs.erase(e.runs.begin());  // and no greedy run at all
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(fact(c, "text greedy").status, FactStatus::missing);
  EXPECT_EQ(fact(c, "nucleus T=0.5 p=0.9 at new token 1 (steps[0])").status, FactStatus::mismatch);
  EXPECT_EQ(fact(c, "stop top-p-0.9-seed-43-eos").found, "max_new_tokens at new token 50");
  EXPECT_EQ(fact(c, "eos token id").status, FactStatus::match);
  const std::string table = format_article_check(c);
  EXPECT_THAT(table, HasSubstr("note: the model is a fixture"));
  EXPECT_THAT(table, HasSubstr("the evidence does not reproduce the article"));
}

TEST(ArticleCheck, NotAFactsFileIsRefused) {
  try {
    load_article_facts(std::string(GENREPRO_SOURCE_DIR) + "/tests/cli/data/diff/golden.json");
    FAIL() << "expected EvidenceError";
  } catch (const EvidenceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not an article-facts file (schema must be \"genrepro.article-facts/1\")"));
  }
}

}  // namespace
}  // namespace genrepro
