#pragma once
// Reading evidence, consistency of the control texts: a run whose list controls were
// given as text records the ids in the lists and the texts in params.control_texts. The reader
// (params_from_json) already holds each text's ids to the entry they stand in; this check, with the
// tokenizer the evidence names at hand, holds them to the tokenizer: each text, encoded by its
// framework's rule (control_text_rule), must give exactly its recorded ids.
#include <string>

#include "evidence/evidence.hpp"
#include "tokenizer/tokenizer.hpp"

namespace genrepro {

// Throws EvidenceError "<file>: <at>.params.control_texts[i].ids: found ...; allowed: ... (<rule>'s
// encoding of the text)" for the first text whose ids are not the tokenizer's.
void control_texts_are_encoded(const RunRecord& r, const Gpt2Tokenizer& tokenizer, const std::string& file, const std::string& at);

}  // namespace genrepro
