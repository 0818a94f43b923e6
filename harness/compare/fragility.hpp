#pragma once
// What a sensitivity matrix (genrepro sensitivity, docs/sensitivity.md) tells the regression gate:
// whether a run that parted from its golden parted where numerics are known to flip tokens.
// `genrepro diff GOLDEN NEW --sensitivity DIR/sensitivity.json` labels each token divergence
// known-fragile (the matrix saw this run flip at this new token, or the golden's top-1/top-2
// logit margin there is at most the matrix's m*) or unexpected. A label explains; it changes
// the exit code only with --allow-fragile.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compare/evidence_diff.hpp"
#include "evidence/evidence.hpp"
#include "util/json_text.hpp"

namespace genrepro {

// The parts of sensitivity.json the gate uses (schema genrepro.sensitivity/1).
struct FragilityKnowledge {
  std::string path;
  std::size_t compared_cells = 0;  // the matrix's cells other than its reference
  std::optional<double> m_star;    // predictor.m_star: absent when no cell flipped a token
  // run id -> new token (1-based, as diff counts) -> the cells whose run diverged there
  std::map<std::string, std::map<int64_t, std::vector<std::string>>> flips;
  std::size_t known_runs = 0;  // runs the matrix compared
};

// Reads and checks sensitivity.json; EvidenceError naming the file, the JSON path and what is
// allowed when it is not a matrix genrepro wrote.
FragilityKnowledge read_fragility(const std::string& path);

enum class FragilityLabel { known_fragile, unexpected };
const char* to_string(FragilityLabel l);  // "known-fragile", "unexpected"
const char* json_name(FragilityLabel l);  // "known_fragile", "unexpected"

struct RunFragility {
  std::string id;
  int64_t new_token = 0;  // 1-based: where the tokens parted
  FragilityLabel label = FragilityLabel::unexpected;
  std::optional<double> golden_logit_margin;  // the golden step's top-1 minus top-2 logit
  std::optional<double> new_logit_margin;
  // The golden step's decisive_margin (compare/sensitivity.hpp), what m* is judged against: the
  // logit margin of a greedy step, temperature x draw margin of a sampled one.
  std::optional<double> golden_decisive_margin;
  bool by_draw = false;  // the golden step was decided by a draw (its margin is T x draw margin)
  std::vector<std::string> flipped_cells;  // the matrix's cells that flipped this run at this token
  std::string why;  // "logit margin 0.003 <= m* 0.01; flipped there in 3 of 12 cells"
};

// One label per run of `d` whose tokens diverged from its golden (matched by id; paired runs are a
// parameter change, not numerics, and are not labelled). `golden` and `current` are what `d` was
// computed from.
std::vector<RunFragility> label_divergences(const EvidenceDiff& d, const std::vector<EvidenceFile>& golden,
                                            const EvidenceFile& current, const FragilityKnowledge& k);

// The gate with --allow-fragile: nothing failed but token divergences, and every one is known-fragile.
bool only_known_fragile(const EvidenceDiff& d, const std::vector<RunFragility>& labels);

std::string format_fragility_text(const FragilityKnowledge& k, const std::vector<RunFragility>& labels);
OrderedJson fragility_to_json(const FragilityKnowledge& k, const std::vector<RunFragility>& labels);

}  // namespace genrepro
