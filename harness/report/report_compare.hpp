#pragma once
// The report's sections that compare the evidence with something else: the golden (the verdict
// that opens a report made with --golden), the other evidence files (A/B, side by side), and the
// article's published facts (--article). Each appends blocks; the rest of the report is
// report_sections.cpp's. Steps are named as people count them, with the JSON index beside:
// "new token 3 (steps[2])", as diff --junit and bless do.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace genrepro {

// The heading of a run's experiment in "All runs": verdict and A/B rows link to it.
std::string experiment_heading(const std::string& experiment);

// Merged evidence from mixed machines (run_environments): which runs ran in which environment and
// where each environment differs from `reference` ("the golden's environment" in text, "golden"
// as a column),
// one row per environment, every differing field folded below. Nothing when the evidence ran in
// one environment or no environment differs.
void add_run_environments(const Evidence& evidence, const Environment& reference, const std::string& reference_name,
                          const std::string& reference_column, std::vector<ReportBlock>& out);

void add_verdict_section(const std::vector<ReportDocument>& documents, const ReportOptions& options,
                         std::vector<ReportBlock>& out);
// Nothing when no run id is in two documents (shards of one grid are pooled, not compared).
void add_ab_section(const std::vector<ReportDocument>& documents, std::vector<ReportBlock>& out);
void add_article_section(const std::vector<ReportDocument>& documents, const ReportOptions& options,
                         std::vector<ReportBlock>& out);

// The article's nucleus size for this run's first prediction (its prompt, temperature and
// top-p with the article's sampler: torch RNG, its top-p rule, temperature before top-p, no
// top-k), when the facts give one.
std::optional<int64_t> article_nucleus(const OrderedJson& facts, const RunRecord& run);

// The article's stop for this run ("max_new_tokens at new token 50", "eos at new token 47"),
// when the facts publish a generation with its parameters: the prompt, max_new_tokens and, for
// sampled runs, temperature, top-p and seed with the article's sampler (torch RNG, its top-p
// rule, temperature before top-p, no top-k).
std::optional<std::string> article_stop(const OrderedJson& facts, const RunRecord& run);
// The same text for a run of the evidence, to compare with it.
std::string stop_as_article_says(const RunRecord& run);

}  // namespace genrepro
