#include "plan/plan_checks.hpp"

#include <algorithm>
#include <string>

#include "util/bounded_read.hpp"
#include "util/errors.hpp"

namespace genrepro {

void check_vocabularies(const Gpt2Config& config, const std::string& config_path, const Gpt2Tokenizer& tokenizer,
                        const std::string& vocab_path) {
  const int64_t tokens = tokenizer.vocab_size();
  if (config.vocab_size >= tokens) return;
  throw ModelFileError(config_path + ": vocab_size = " + std::to_string(config.vocab_size) + " is less than the " +
                       std::to_string(tokens) + " ids of " + vocab_path + " (largest id " + std::to_string(tokens - 1) +
                       "); allowed: at least " + std::to_string(tokens) +
                       " (a larger, padded vocab_size is fine); the weights and the tokenizer are from different models");
}

namespace {

// a * b + c, saturating: a grid near --max-runs' ceiling with a large cap must not wrap.
uint64_t saturating_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t saturating_mul(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

std::string mib(uint64_t bytes) {
  const uint64_t tenths = bytes / (uint64_t(1) << 20) * 10 + (bytes % (uint64_t(1) << 20)) * 10 / (uint64_t(1) << 20);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " MiB";
}

// Bytes of `text` as a JSON string at most: a control character is written as \u00XX.
uint64_t json_text_bytes(const std::string& text) { return saturating_mul(text.size(), kEvidenceBytesPerTextByte) + 2; }

// The lists a framework run's params carry, each entry on its own lines (indent 2).
uint64_t control_list_bytes(const FrameworkControls& c) {
  uint64_t bytes = 0;
  const auto ids = [](std::size_t n) { return saturating_mul(n, kEvidenceBytesPerListedId); };
  for (const auto& words : c.bad_words_ids) bytes = saturating_add(bytes, kEvidenceBytesPerListEntry + ids(words.size()));
  for (const SequenceBias& b : c.sequence_bias) bytes = saturating_add(bytes, kEvidenceBytesPerListEntry + ids(b.tokens.size()));
  bytes = saturating_add(bytes, saturating_mul(c.suppress_tokens.size(), kEvidenceBytesPerListedId));
  bytes = saturating_add(bytes, saturating_mul(c.logit_bias.size(), kEvidenceBytesPerListEntry));
  for (const ControlText& t : c.texts)
    bytes = saturating_add(bytes, kEvidenceBytesPerListEntry + json_text_bytes(t.text) + ids(t.ids.size()));
  return bytes;
}

}  // namespace

EvidenceSizeEstimate estimate_evidence_size(const RunPlan& plan) {
  EvidenceSizeEstimate e;
  e.bytes = kEvidenceHeaderBytes;
  // Each experiment file is recorded whole (experiments[].spec), indented deeper than it was parsed.
  for (const ExperimentSpec& x : plan.experiments) {
    const std::string spec = x.spec.dump(2);
    const auto lines = static_cast<uint64_t>(std::count(spec.begin(), spec.end(), '\n')) + 1;
    e.bytes = saturating_add(e.bytes, saturating_add(spec.size(), saturating_mul(lines, kEvidenceSpecIndentBytes)));
  }
  for (int64_t index : plan.selected) {
    const ExpandedRun& run = plan.runs[static_cast<size_t>(index)];
    const RunParams& p = run.params;
    // The prompt is written twice (prompt, and text = prompt + continuation), its ids once a line each.
    e.bytes = saturating_add(e.bytes, saturating_mul(json_text_bytes(run.prompt), 2));
    e.bytes = saturating_add(e.bytes, saturating_mul(plan.prompt_ids[static_cast<size_t>(index)].size(), kEvidenceBytesPerListedId));
    e.bytes = saturating_add(e.bytes, json_text_bytes(run.id) + json_text_bytes(run.experiment));
    e.bytes = saturating_add(e.bytes, control_list_bytes(p.sampling.controls));
    const uint64_t steps = static_cast<uint64_t>(std::max<int64_t>(p.max_new_tokens, 1));
    const uint64_t candidates = saturating_mul(steps, static_cast<uint64_t>(std::max<int64_t>(p.top_candidates, 0)));
    ++e.runs;
    e.steps = saturating_add(e.steps, steps);
    e.candidates = saturating_add(e.candidates, candidates);
    e.bytes = saturating_add(e.bytes, kEvidenceBytesPerRun);
    e.bytes = saturating_add(e.bytes, saturating_mul(steps, kEvidenceBytesPerStep));
    // A framework run's steps list its stages: at most every stage of its order.
    if (p.sampling.framework != Framework::article)
      e.bytes = saturating_add(e.bytes, saturating_mul(steps, kEvidenceBytesPerStage * p.sampling.sampler_order.size()));
    e.bytes = saturating_add(e.bytes, saturating_mul(candidates, kEvidenceBytesPerCandidate));
  }
  return e;
}

void check_evidence_size(const RunPlan& plan) {
  const EvidenceSizeEstimate e = estimate_evidence_size(plan);
  if (e.bytes <= kMaxEvidenceBytes) return;
  const uint64_t shards = std::min<uint64_t>(e.bytes / kMaxEvidenceBytes + 1, 1000000);
  throw SpecError("the evidence of these " + std::to_string(e.runs) + " runs would be about " + std::to_string(e.bytes) +
                  " bytes (" + mib(e.bytes) + ": " + std::to_string(e.steps) + " steps at most, " +
                  std::to_string(e.candidates) + " candidates of record.top_candidates), more than the " +
                  mib(kMaxEvidenceBytes) + " every evidence reader (and --resume) accepts; record fewer candidates " +
                  "(--top-candidates N) or split the runs (--shard I/" + std::to_string(shards) + " or more shards)");
}

}  // namespace genrepro
