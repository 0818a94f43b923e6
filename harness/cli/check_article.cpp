// genrepro check-article FACTS EVIDENCE: does this evidence reproduce what the article published?
#include <algorithm>
#include <memory>
#include <string>

#include "cli/verbs.hpp"
#include "evidence/evidence_consistency.hpp"
#include "golden/article_check.hpp"
#include "evidence/evidence.hpp"
#include "params/framework_params.hpp"

namespace genrepro::cli {

namespace {

struct CheckArticleOptions {
  std::string facts;     // golden/article/article-facts.json
  std::string evidence;  // from genrepro run experiments/article/*.json --model <GPT-2 dir>
  std::string golden;    // optional: compare each run's environment with the golden's
  bool json = false;
};

constexpr int kExitReproduced = 0;
constexpr int kExitMismatch = 1;

// A stage that changes logits before the pick (a penalty, a bias, a banned or suppressed token,
// EOS masked): a greedy run of hf or llama.cpp with one is not the article's greedy loop, which
// takes the argmax of the model's logits. Filters (top-k, top-p, min-p, ...) keep the argmax.
bool changes_logits(SamplerStage stage) {
  switch (stage) {
    case SamplerStage::sequence_bias:
    case SamplerStage::repetition_penalty:
    case SamplerStage::no_repeat_ngram_size:
    case SamplerStage::bad_words_ids:
    case SamplerStage::min_length:
    case SamplerStage::min_new_tokens:
    case SamplerStage::suppress_tokens:
    case SamplerStage::logit_bias:
    case SamplerStage::penalties:
      return true;
    default:
      return false;
  }
}

bool could_be_the_articles(const RunRecord& r) {
  const SamplingParams& s = r.params.sampling;
  if (s.framework == Framework::article) return true;
  const bool greedy = s.mode == DecodeMode::greedy || s.temperature == 0.0;
  for (SamplerStage stage : active_stages(s, greedy))
    if (changes_logits(stage)) return false;
  return true;
}

// The evidence without the runs no fact can rest on (their params say they ran another loop).
EvidenceFile countable_runs(EvidenceFile evidence) {
  auto& runs = evidence.evidence.runs;
  runs.erase(std::remove_if(runs.begin(), runs.end(), [](const RunRecord& r) { return !could_be_the_articles(r); }), runs.end());
  return evidence;
}

int run_check_article(const CheckArticleOptions& a, Console& io) {
  const OrderedJson facts = load_article_facts(a.facts);
  const EvidenceFile evidence = countable_runs(read_evidence_file(a.evidence));
  ArticleCheck check;
  if (a.golden.empty()) {
    check = check_article(facts, a.facts, evidence);
  } else {
    const std::vector<EvidenceFile> golden = read_golden(a.golden);
    check = check_article(facts, a.facts, evidence, golden.front().evidence.environment,
                          "the golden's environment (" + golden.front().path + ")");
  }
  print_unchecked_texts(evidence.path, evidence.evidence, io.err);
  if (a.json)
    io.out << json_document_text(article_check_to_json(check)) << "\n";
  else
    io.out << format_article_check(check);
  return check.passed() ? kExitReproduced : kExitMismatch;
}

}  // namespace

void setup_check_article(CLI::App& app, VerbContext& ctx) {
  auto a = std::make_shared<CheckArticleOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check-article",
      "Check evidence against the article's published facts (golden/article/article-facts.json):\n"
      "its generated texts, the seed-43 run stopping at EOS as new token 47, the nucleus sizes\n"
      "35 / 1,279 / 14,905 at T = 0.5 / 1 / 2 with p = 0.9, and EOS id 50256. Runs are found by\n"
      "their parameters. Prints one row per fact (golden/article/README.md). Runs whose environment\n"
      "differs (merged shards from mixed machines; with --golden, from the golden's) are named with\n"
      "their environment beside each fact they rest on.\n"
      "Exit: 0 every counted fact matches, 1 a mismatch or a missing run, 2 bad input.");
  cmd->add_option("FACTS", a->facts, "golden/article/article-facts.json")->required();
  cmd->add_option("EVIDENCE", a->evidence, "Evidence from 'genrepro run experiments/article/*.json --model DIR'")->required();
  cmd->add_option("--golden", a->golden,
                  "Golden evidence (a file, or a directory of them): name each run's environment where it differs\n"
                  "from the golden's (default: from the evidence's own environment block)");
  cmd->add_flag("--json", a->json, "Print the result as JSON (schema genrepro.article-check/1)");
  on_verb(*cmd, ctx, [a, &ctx] { ctx.exit_code = run_check_article(*a, ctx.io); });
}

}  // namespace genrepro::cli
