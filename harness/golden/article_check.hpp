#pragma once
// Checks evidence against what the article published for real GPT-2 (golden/article/
// article-facts.json): its generated texts, where the seed-43 run stops, the first prediction's
// nucleus sizes, and the EOS token. Runs are found by their parameters (mode, temperature,
// top_p, top_k = 0, seed, max_new_tokens, prompt), not by id, so any experiment file that asks
// for the article's runs can be checked. No libtorch.
#include <cstddef>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"
#include "util/json_text.hpp"

namespace genrepro {

inline constexpr const char* kArticleFactsSchema = "genrepro.article-facts/1";

enum class FactStatus {
  match,      // equal (texts: exactly, or after the documented typography normalization)
  mismatch,   // the evidence has the run and it disagrees
  missing,    // no run in the evidence has the fact's parameters
  unchecked,  // cannot be checked from this evidence (e.g. no run produced EOS); not counted
};
const char* to_string(FactStatus s);

struct FactCheck {
  std::string fact;      // "text greedy", "stop top-p-0.9-seed-43-eos", "nucleus T=0.5 p=0.9", "eos token id"
  std::string expected;  // as shown in the table
  std::string found;
  FactStatus status = FactStatus::missing;
  bool counted = true;   // false for facts resting on an assumed seed (a mismatch is shown, not failed)
  std::string note;      // e.g. "match after typography normalization", "run <id>"
};

struct ArticleCheck {
  std::string facts_path;
  std::string evidence_path;
  std::string model_source;  // evidence model.source ("fixture", "hf-dir", ...)
  std::vector<FactCheck> facts;
  std::size_t count(FactStatus s, bool counted_only = true) const;
  bool passed() const { return count(FactStatus::mismatch) == 0 && count(FactStatus::missing) == 0; }
};

// Reads golden/article/article-facts.json; throws EvidenceError naming file and JSON path.
OrderedJson load_article_facts(const std::string& path);

ArticleCheck check_article(const OrderedJson& facts, const std::string& facts_path, const EvidenceFile& evidence);

// The per-fact table, then one summary line; on a fixture model, a line saying why texts and
// nucleus sizes cannot match (its weights are not GPT-2's).
std::string format_article_check(const ArticleCheck& check);

// The --json document ("schema": "genrepro.article-check/1"): passed, counts by status, and
// every fact with its expected and found values, status, whether it counts, and its note.
OrderedJson article_check_to_json(const ArticleCheck& check);

// The comparison form of a text: U+2019 -> ', every run of line breaks -> one (the article's
// typesetting; golden/article/README.md).
std::string normalize_article_text(const std::string& text);

}  // namespace genrepro
