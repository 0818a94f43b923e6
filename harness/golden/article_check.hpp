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
#include "evidence/run_environment_groups.hpp"
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
  std::vector<int64_t> runs;  // indices of the runs the fact was checked on (none: from the config, or no run)
  // The environments of those runs that differ from the check's reference environment (numbers
  // of ArticleCheck::environments' groups), ascending; empty when every run ran in the reference's.
  std::vector<std::size_t> environments;
};

struct ArticleCheck {
  std::string facts_path;
  std::string evidence_path;
  std::string model_source;  // evidence model.source ("fixture", "hf-dir", ...)
  std::vector<FactCheck> facts;
  // What the runs' environments are compared with: "the evidence's environment" (its own
  // `environment` block), or the golden's with check-article --golden.
  std::string environment_reference = "the evidence's environment";
  // The evidence's environments that differ from the reference (merged shards from mixed machines,
  // or a golden made elsewhere), each with its runs; empty when none differs.
  std::vector<RunEnvironmentGroup> environments;
  std::size_t count(FactStatus s, bool counted_only = true) const;
  bool passed() const { return count(FactStatus::mismatch) == 0 && count(FactStatus::missing) == 0; }
};

// Reads golden/article/article-facts.json; throws EvidenceError naming file and JSON path.
OrderedJson load_article_facts(const std::string& path);

// Each fact names the environment of the runs it rests on where that differs from `reference`
// (named `reference_name` in the output); by default the evidence's own environment, so merged
// evidence from mixed machines says which facts rest on runs of the other machines.
ArticleCheck check_article(const OrderedJson& facts, const std::string& facts_path, const EvidenceFile& evidence);
ArticleCheck check_article(const OrderedJson& facts, const std::string& facts_path, const EvidenceFile& evidence,
                           const Environment& reference, const std::string& reference_name);

// "environment 2 (runs 1, 3): cpu.model \"AMD EPYC 9R14\"; and 3 more" for a fact whose runs ran in
// environments that differ from the reference (one such part per environment); empty otherwise.
std::string fact_environment_text(const ArticleCheck& check, const FactCheck& fact);

// The per-fact table, then, where runs ran in environments that differ from the reference, one
// line per environment (its runs and every differing field), then one summary line; on a fixture
// model, a line saying why texts and nucleus sizes cannot match (its weights are not GPT-2's).
std::string format_article_check(const ArticleCheck& check);

// The --json document ("schema": "genrepro.article-check/1"): passed, counts by status, and
// every fact with its expected and found values, status, whether it counts, and its note.
OrderedJson article_check_to_json(const ArticleCheck& check);

// The comparison form of a text: U+2019 -> ', every run of line breaks -> one (the article's
// typesetting; golden/article/README.md).
std::string normalize_article_text(const std::string& text);

}  // namespace genrepro
