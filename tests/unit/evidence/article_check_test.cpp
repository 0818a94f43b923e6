// check-article against golden/article/article-facts.json: the facts file holds the article's
// published numbers; evidence that reproduces them passes, fixture evidence fails clearly.
#include "evidence/article_check.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/errors.hpp"

namespace genrepro {
namespace {

using Json = EvidenceJson;
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

Json article_params(const Json& fact_params) {
  return Json{{"mode", fact_params["mode"]},
              {"temperature", fact_params.value("temperature", 1.0)},
              {"top_k", 0},
              {"top_p", fact_params.value("top_p", 1.0)},
              {"seed", fact_params.value("seed", 0)},
              {"sampler_order", {"temperature", "top_k", "top_p"}},
              {"top_p_rule", "article"},
              {"rng", "torch"},
              {"max_new_tokens", fact_params["max_new_tokens"]}};
}

// Step 0's nucleus size: a run with the facts' T and p has the published size there.
int64_t first_kept(const Json& facts, const Json& params) {
  for (const Json& n : facts["nucleus_sizes"])
    if (params.value("temperature", 1.0) == n["temperature"] && params.value("top_p", 1.0) == n["top_p"]) return n["kept"];
  return 1;
}

// Evidence that reproduces every fact.
Json reproducing_evidence(const Json& facts) {
  Json runs = Json::array();
  for (const Json& g : facts["generations"])
    runs.push_back(Json{{"id", "article/" + g["name"].get<std::string>()},
                        {"prompt", facts["prompt"]},
                        {"params", article_params(g["params"])},
                        {"text", as_gpt2_wrote_it(g["text"].get<std::string>())},
                        {"stop", g["stop"]},
                        {"steps", {{{"step", 0}, {"token_id", 1}, {"token_text", " a"}, {"kept", first_kept(facts, g["params"])}}}}});
  for (const Json& n : facts["nucleus_sizes"]) {
    const Json p{{"mode", "sample"}, {"temperature", n["temperature"]}, {"top_p", n["top_p"]}, {"seed", 42}, {"max_new_tokens", 0}};
    runs.push_back(Json{{"id", "article/nucleus-" + n["temperature"].dump()},
                        {"prompt", facts["prompt"]},
                        {"params", article_params(p)},
                        {"text", facts["prompt"]},
                        {"stop", {{"reason", "max_new_tokens"}, {"step", 0}}},
                        {"steps", {{{"step", 0}, {"token_id", nullptr}, {"kept", n["kept"]},
                                    {"top", {{{"id", 50256}, {"text", "<|endoftext|>"}, {"prob", 0.0}, {"prob_scaled", 0.0}}}}}}}});
  }
  return Json{{"schema", "genrepro.evidence/1"}, {"model", {{"source", "hf-dir"}, {"eos_token_id", 50256}}}, {"runs", runs}};
}

const FactCheck& fact(const ArticleCheck& c, const std::string& name) {
  for (const FactCheck& f : c.facts)
    if (f.fact == name) return f;
  ADD_FAILURE() << "no fact " << name;
  return c.facts.front();
}

TEST(ArticleFacts, HoldTheArticlesPublishedNumbers) {
  const Json facts = load_article_facts(kFactsPath);
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
  const Json& eos_run = facts["generations"][6];
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
  const Json facts = load_article_facts(kFactsPath);
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", reproducing_evidence(facts)});
  EXPECT_TRUE(c.passed()) << format_article_check(c);
  EXPECT_EQ(c.count(FactStatus::mismatch, false), 0u);
  EXPECT_EQ(fact(c, "nucleus T=1 p=0.9 step 0").found, "1279");
  EXPECT_EQ(fact(c, "stop top-p-0.9-seed-43-eos").found, "eos at new token 47");
  EXPECT_THAT(fact(c, "text greedy").note, HasSubstr("match after typography normalization"));
  EXPECT_EQ(fact(c, "eos token text").status, FactStatus::match);
  EXPECT_THAT(format_article_check(c), HasSubstr("the evidence reproduces the article"));
}

TEST(ArticleCheck, OnlyTheArticlesSamplerConfigurationIsMatched) {
  const Json facts = load_article_facts(kFactsPath);
  Json e = reproducing_evidence(facts);
  // The same T and p with temperature applied last (llama.cpp's order) is another experiment:
  // its nucleus size must not be checked against the article's.
  Json other = e["runs"][7];
  other["id"] = "sampler_order/temperature-last";
  other["params"]["sampler_order"] = {"top_k", "top_p", "temperature"};
  other["steps"][0]["kept"] = 4;
  e["runs"].push_back(other);
  // A chain without top_p does not filter, whatever params.top_p says.
  e["runs"][2]["params"]["sampler_order"] = {"temperature"};
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_TRUE(c.passed()) << format_article_check(c);
  EXPECT_EQ(fact(c, "nucleus T=0.5 p=0.9 step 0").found, "35");
}

TEST(ArticleCheck, OneChangedTextIsAMismatchShowingWhere) {
  const Json facts = load_article_facts(kFactsPath);
  Json e = reproducing_evidence(facts);
  e["runs"][2]["text"] = "the river bank was solid and empty a few weeks in advance.";
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_FALSE(c.passed());
  const FactCheck& f = fact(c, "text temperature-1-seed-42");
  EXPECT_EQ(f.status, FactStatus::mismatch);
  EXPECT_THAT(f.note, HasSubstr("first difference at byte 41"));
  EXPECT_THAT(f.found, HasSubstr("weeks"));
}

TEST(ArticleCheck, RunsOnAnUnprintedSeedAreShownButNotCounted) {
  const Json facts = load_article_facts(kFactsPath);
  Json e = reproducing_evidence(facts);
  e["runs"][4]["text"] = "the river bank was something else";  // top-p run 1: seed assumed
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(fact(c, "text top-p-0.9-run-1").status, FactStatus::mismatch);
  EXPECT_FALSE(fact(c, "text top-p-0.9-run-1").counted);
}

TEST(ArticleCheck, FixtureEvidenceFailsWithAClearTable) {
  const Json facts = load_article_facts(kFactsPath);
  Json e = reproducing_evidence(facts);
  e["model"]["source"] = "fixture";
  for (Json& r : e["runs"]) {
    r["text"] = "the river bank was noise";
    r["stop"] = Json{{"reason", "max_new_tokens"}, {"step", r["params"]["max_new_tokens"]}};
    r["steps"][0]["kept"] = 3;  // every nucleus size wrong, and consistently so
  }
  e["runs"].erase(e["runs"].begin());  // and no greedy run at all
  const ArticleCheck c = check_article(facts, kFactsPath, EvidenceFile{"e.json", e});
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(fact(c, "text greedy").status, FactStatus::missing);
  EXPECT_EQ(fact(c, "nucleus T=0.5 p=0.9 step 0").status, FactStatus::mismatch);
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
