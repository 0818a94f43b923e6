#pragma once
// Reading evidence, fourth stage: consistency. The structural checks (evidence_checks.cpp) hold
// each value to its own range; this layer holds the values to each other, to what the writer
// derives them from (engine/step_evidence.cpp, engine/generation_loop.cpp, engine/runner.cpp):
//   - a step's candidates are in the writer's order (prob_scaled never rises) with ids unique;
//     rest_mass and margin are what the candidates say (within kRelationSlack);
//   - a greedy step's token is its top candidate; the chosen token's prob, prob_t1 and text are
//     its candidate entry's when it is listed;
//   - the run id is run_id(experiment, prompt_index, prompt, params), and the run is one of the
//     runs its recorded experiment spec expands to (same id, prompt_index, prompt, params);
//   - the stop agrees with the ids and model.n_positions (the loop's context);
//   - the texts (text, continuation, token_text, every candidate's text) are the tokenizer's
//     decode of their ids, and prompt_ids its encoding of the prompt, when the tokenizer the
//     evidence names is at hand: model.path's vocab and merges files with the recorded sha256.
//     Otherwise the texts are not checked and the reason is returned for the verbs to print.
// docs/validation.md tabulates every relation with its tolerance and message. Each violation is an
// EvidenceError: "<file>: <JSON path>: found <value>; allowed: <value> (<why>); regenerate ...".
#include <ostream>
#include <string>
#include <vector>

#include "evidence/evidence.hpp"

namespace genrepro {

// The probabilities are float32 values held in double. The writer derives rest_mass (1 - the sum
// of the listed prob_scaled, summed in double in list order) and margin (a double difference of
// two of them) exactly, so its own files agree to the last bit; the slack admits a writer that
// sums the N float32 values in float32 instead: each of the N additions and the final subtraction
// rounds by at most half a float32 ulp of a value <= 1, so the error is below (N + 1) * FLT_EPSILON.
// An edit a person makes (a digit changed, a candidate dropped) is orders of magnitude larger.
double relation_slack(std::size_t candidates);

// Checks every relation above on `e` (already structurally checked); throws EvidenceError for the
// first violation. The texts are checked only when the tokenizer is at hand: model.path or the
// tokenizer directory ($GENREPRO_TOKENIZER_DIR, else the build's) holds files with the recorded
// checksums. It is loaded once per process for each set of checksums, on the first file that
// needs it.
void check_consistency(const Evidence& e, const std::string& file);

// Why check_consistency did not check the texts of `e` ("" when it did, or there are none):
// "the recorded vocab.json and merges.txt (model.files sha256) are not at hand: ...". What was
// found is remembered, so asking costs nothing after the read.
std::string texts_unchecked(const Evidence& e);

// The note a verb prints (stderr) for a file whose texts were not checked:
// "note: <file>: texts not checked against the tokenizer: <why>". Empty when they were checked.
std::string unchecked_texts_note(const std::string& file, const Evidence& e);
// Writes that note, one line, to `err` (diff, report and check-article do, for every file they read).
void print_unchecked_texts(const std::string& file, const Evidence& e, std::ostream& err);
void print_unchecked_texts(const std::vector<EvidenceFile>& files, std::ostream& err);

}  // namespace genrepro
