#pragma once
// What is checked of a whole plan before any run starts, in `plan`, `run` and (the vocabularies)
// `generate` alike: the model and the tokenizer agree, and the evidence the runs would write fits
// the size every evidence reader accepts (so `run` never writes what its readers refuse).
#include <cstdint>
#include <string>

#include "model/model_config.hpp"
#include "plan/run_plan.hpp"
#include "tokenizer/tokenizer.hpp"

namespace genrepro {

// vocab_size must cover every id the tokenizer can produce (at least its largest id + 1), or the
// model would be asked for a row it does not have. A larger vocab_size is a padded one (nanoGPT
// rounds 50257 up to 50304): accepted, and its extra ids are never picked (Gpt2Model::load's
// decodable_ids; docs/validation.md). Throws ModelFileError naming config.json, both sizes and the fix.
void check_vocabularies(const Gpt2Config& config, const std::string& config_path, const Gpt2Tokenizer& tokenizer,
                        const std::string& vocab_path);

// Bytes of evidence text, measured on the fixture goldens (golden/fixture, written with
// json_document_text's indent of 2): a candidate takes 170-181 bytes there, and with
// record.top_candidates 50257 at 20 tokens the whole vocabulary's average gave 186 MB, 185 a
// candidate; a step's own fields 490-600; a run's params, prompt and ids about 2 KiB; the header
// (environment, model, experiments) 7-8 KiB. Each constant is the top of its measured range, so
// the estimate errs high. A checkpoint line is the same run without indentation (about half the
// bytes), so evidence that fits means its checkpoint fits too.
inline constexpr uint64_t kEvidenceBytesPerCandidate = 185;
inline constexpr uint64_t kEvidenceBytesPerStep = 600;
inline constexpr uint64_t kEvidenceBytesPerRun = 2048;
inline constexpr uint64_t kEvidenceHeaderBytes = 8192;
// A framework run's step lists its stages: {"stage": "repetition_penalty", "kept": 50257} with
// the indent of a step's array entry is at most 80 bytes.
inline constexpr uint64_t kEvidenceBytesPerStage = 80;
// What depends on the input rather than the grid: text is written as JSON (a control character
// as \u00XX: 6 bytes a byte at most), the prompt twice per run (prompt, text), each token id of a
// list on its own line (at most 16 bytes there), each control list entry's brackets and bias
// (96 bytes), and each experiment file whole in the header, 8 more bytes of indent a line.
inline constexpr uint64_t kEvidenceBytesPerTextByte = 6;
inline constexpr uint64_t kEvidenceBytesPerListedId = 16;
inline constexpr uint64_t kEvidenceBytesPerListEntry = 96;
inline constexpr uint64_t kEvidenceSpecIndentBytes = 8;

struct EvidenceSizeEstimate {
  uint64_t runs = 0;
  uint64_t steps = 0;       // at most: every run to its max_new_tokens (1 for a first prediction)
  uint64_t candidates = 0;  // steps x top_candidates, summed over the runs
  uint64_t bytes = 0;
};

// The evidence of the plan's selected runs, at most: the constants above per run, step and
// candidate, plus the prompts, ids, control lists and experiment files the runs carry.
EvidenceSizeEstimate estimate_evidence_size(const RunPlan& plan);

// Throws SpecError when the estimate passes kMaxEvidenceBytes (util/bounded_read.hpp), the limit
// of the evidence reader and of the checkpoint, with the estimate, what it is made of and the
// fixes (--top-candidates, --shard with the count that would fit).
void check_evidence_size(const RunPlan& plan);

}  // namespace genrepro
