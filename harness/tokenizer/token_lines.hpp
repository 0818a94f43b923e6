#pragma once
// Text <-> ids as JSON, for `genrepro tokenize`: one JSON array of ids per text, and JSON-lines
// files ({"text": ...} per line one way, [ids...] per line the other) processed in order.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.hpp"

namespace genrepro {

// Parses "[1169, 7850]" (a JSON array of integers). `where` names the source in errors
// ("--decode TEXT", "--input 'ids.jsonl' line 3"). Throws UsageError.
std::vector<int64_t> parse_id_array(std::string_view json, const std::string& where);

// The ids as one line of JSON: [1169,7850,3331,373]
std::string ids_to_json(const std::vector<int64_t>& ids);

// Reads {"text": "..."} lines from `in` and writes one JSON array of ids per line to `out`.
// `name` is the file name used in errors, which also give the 1-based line number.
void encode_json_lines(const Gpt2Tokenizer& tokenizer, std::istream& in, const std::string& name, std::ostream& out);

// Reads one JSON array of ids per line and writes {"text": "..."} per line. JSON cannot hold
// ill-formed UTF-8, so a text that ends inside a character is shown with U+FFFD there.
void decode_json_lines(const Gpt2Tokenizer& tokenizer, std::istream& in, const std::string& name, std::ostream& out);

}  // namespace genrepro
