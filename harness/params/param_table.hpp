#pragma once
// Every run parameter, declared once (sentencepiece's spec_parser.h and llama.cpp's
// common/arg.cpp are the models): its key, what it accepts and the words for that, which
// frameworks have it, whether it matters only when sampling, how it is read from JSON and
// written back, the flags that set it, the differences diff explains by it, its part in the run
// id, and its short label. Experiment files, evidence, generate's flags, diff, pairing, the
// grid summary and the report read this table, so a new control is one row plus its stage.
// No libtorch.
//
// The rows are in the order evidence writes params (params_to_json); that is also the order
// experiment entries nest their grids (the framework outermost, replicas innermost) and the
// order check_run_params reports problems in.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "params/run_params.hpp"

namespace genrepro {

// "replicas": N repeats each run of an experiment entry N times; more is a typo, not a study.
inline constexpr int64_t kMaxReplicas = 10000;

// What JSON a parameter takes (for flags: how the flag's text becomes that JSON).
enum class ParamKind {
  mode,       // "greedy" | "sample"
  real,       // a number
  integer,    // an integer (int64)
  seed,       // an integer in [0, 2^64)
  boolean,    // true | false
  name,       // one name of an enum (top_p_rule, rng, framework)
  stages,     // a list of stage names (sampler_order)
  copy,       // the copy index of an identical run (replica)
  token_list, // a list control: token ids or texts (suppress_tokens, bad_words_ids, ...)
};

// Which frameworks a parameter means something in.
enum FrameworkMask : unsigned { kArticleOnly = 1u, kHfOnly = 2u, kLlamaCppOnly = 4u, kEveryFramework = 7u };
unsigned framework_bit(Framework f);

// Which differences a change of the parameter explains (docs/diff.md, "Verdicts").
enum DiffGroup : unsigned {
  kShapesModel = 1u,   // the unfiltered distribution a step records (softmax(logits / T))
  kSetsChain = 2u,     // the framework and its chain's controls: rules, order, draw
  kSetsKept = 4u,      // the kept set (top_k, top_p)
  kSetsSampler = 8u,   // the sampler and its RNG
  kSetsStop = 16u,     // when a run stops
  kSetsListing = 32u,  // what a step lists
};

// Who spells a flag that way: genrepro's own spelling, or the one users of Hugging Face's
// generate() or llama.cpp's tools type. A spelling of one framework given while another's rules
// apply earns a line saying which rules ran (cli/generate.cpp).
enum class FlagOrigin { genrepro, hf, llama_cpp };
struct FlagSpelling {
  const char* text;  // "--temp", "-n"
  FlagOrigin origin;
};

// Why a value was refused: what is allowed, and where inside the value when one element is the
// problem (`at` "[1]" and that element; `at` empty: the whole value). `shown` replaces the
// value's JSON in messages where a name check has its own words (top_q, not "top_q").
struct ValueProblem {
  std::string allowed;
  std::string at;
  nlohmann::json value;
  std::optional<std::string> shown;
};

struct ParamRow {
  const char* key;          // the JSON key of experiment entries and evidence params
  ParamKind kind;
  unsigned frameworks;      // FrameworkMask
  bool sampling_only;       // means nothing in a greedy run
  bool inherited;           // may be written at an experiment file's top level for every entry
  unsigned diff_groups;     // DiffGroup bits
  const char* label;        // the short name run labels and chart rows use; null: never labelled
  std::vector<FlagSpelling> flags;  // generate's flags, the primary spelling first; empty: none
  const char* help;         // generate --help's line
  std::string (*allowed)(); // what it accepts, in the words every message uses
  nlohmann::ordered_json (*get)(const RunParams&);  // the value as evidence writes it
  // Type-checks `value` and stores it (ranges are check_run_params'): the one reader of
  // experiment files, evidence and flags.
  std::optional<ValueProblem> (*read)(RunParams&, const nlohmann::json& value);
  // The run id's summary part ("-t0.7"); null: the parameter has none.
  std::string (*id_part)(const RunParams&);
  // Whether the value is in the range its framework takes (check_run_params reports it with
  // `allowed`); null: the checks that read several values at once judge it (params/sampling_params.cpp,
  // params/framework_params.cpp).
  bool (*in_range)(const RunParams&) = nullptr;
  // One value per entry, never a grid axis (a list is refused, saying why `single` does).
  const char* single = nullptr;

  bool is_control() const { return frameworks != kEveryFramework; }
  bool list_valued() const { return kind == ParamKind::token_list; }
  bool has(Framework f) const { return (frameworks & framework_bit(f)) != 0; }
  const char* primary_flag() const { return flags.empty() ? nullptr : flags.front().text; }
};

// The table, in evidence order.
const std::vector<ParamRow>& param_table();
// The row of `key`, or null.
const ParamRow* find_param(const std::string& key);
// The row of `key`; `key` must be in the table.
const ParamRow& param(const std::string& key);

// The first spelling of the row that has `spelling` among its flags ("-n" -> "--max-new-tokens");
// `spelling` itself when no row has it.
std::string primary_spelling(const std::string& spelling);

// The frameworks' own controls (rows only hf or llama.cpp have), in table order.
const std::vector<const ParamRow*>& control_rows();

// Whether `v` has the JSON type evidence writes for a parameter of kind `k`, and that type in
// words ("a number", "an integer", "a list of stage names"): the evidence reader's check before
// a row's reader sees the value.
bool has_evidence_type(ParamKind k, const nlohmann::json& v);
const char* evidence_type_words(ParamKind k);

// Whether evidence writes `row` for `p`: every run writes the article's keys; a copy (replica
// 1..N-1) its copy index; a framework run its framework and every control that framework has,
// resolved. So an article run's params, and every run id, are what they were before the
// frameworks and copies existed.
bool written_in_evidence(const ParamRow& row, const RunParams& p);

// The value of `row` for `p` as a label shows it: "0.7", "40", "top_k→top_p→temperature".
std::string label_value(const ParamRow& row, const RunParams& p);
// The same as a CSV cell: numbers as written (shortest round-trip), lists as JSON.
std::string csv_value(const ParamRow& row, const RunParams& p);

// A framework's defaults for a run of `mode` (resolve_framework's preset), as RunParams.
RunParams framework_defaults(Framework f, DecodeMode mode);

// One part of a run's label: the row it shows ("framework", "mode", "temperature", ...) and its
// text ("llama.cpp", "greedy", "T=0.7").
struct LabelPart {
  std::string key;
  std::string text;
};
// What a run's label says of its sampling: its framework (unless article); "greedy", or T, top_k
// and top_p when on, and the seed; every control of its framework that is on; the order, top-p
// rule and RNG where they are not the framework's own: "llama.cpp T=0.7 top_k=40 top_p=0.95
// seed=1 min_p=0.05 repeat_penalty=1.1". The stop, cache and listing parameters are not part of it.
std::vector<LabelPart> label_parts(const RunParams& p);

}  // namespace genrepro
