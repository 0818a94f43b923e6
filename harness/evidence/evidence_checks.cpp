// Reading evidence, third stage: what must hold between fields, checked once on typed values so
// that no verb re-checks it. Each rule is what the writer guarantees (engine/generation_loop.cpp
// and engine/runner.cpp make it so); a file breaking one was edited or damaged. One function per
// rule, each naming the file and JSON path of the first violation, the value found and what is
// allowed. Value ranges and enumerations (probabilities in [0, 1], ...) belong here too.
#include <map>
#include <string>

#include "evidence/evidence.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

[[noreturn]] void violated(const std::string& file, const std::string& path, const std::string& what) {
  throw EvidenceError(file + ": " + path + ": " + what + "; " + kRegenerateEvidenceHint);
}

std::string show(const std::optional<int64_t>& id) { return id ? std::to_string(*id) : "null"; }

// Run ids name runs everywhere (diff matches by them, bless files them, merge slots them).
void ids_are_unique(const Evidence& e, const std::string& file) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const auto [it, fresh] = seen.emplace(e.runs[i].id, i);
    if (!fresh)
      throw EvidenceError(file + ": run id \"" + e.runs[i].id + "\" appears twice (runs[" + std::to_string(it->second) +
                          "] and runs[" + std::to_string(i) +
                          "]); ids must be unique — regenerate or merge the evidence with genrepro");
  }
}

// The loop refuses an empty prompt: there is nothing to predict from.
void prompt_is_not_empty(const RunRecord& r, const std::string& file, const std::string& at) {
  if (r.result.prompt_ids.empty()) violated(file, at + ".prompt_ids", "found an empty array; allowed: at least 1 token");
}

// steps[k].step == k.
void steps_are_numbered_in_order(const RunRecord& r, const std::string& file, const std::string& at) {
  const std::vector<StepRecord>& steps = r.result.steps;
  for (std::size_t k = 0; k < steps.size(); ++k)
    if (steps[k].step != static_cast<int64_t>(k))
      violated(file, at + ".steps[" + std::to_string(k) + "].step",
               "found " + std::to_string(steps[k].step) + "; allowed: " + std::to_string(k) +
                   " (steps are numbered 0, 1, 2, ... in order)");
}

// One step per output id, holding that id; or, when max_new_tokens is 0, the first prediction
// alone: one step, no token, no output ids.
void steps_are_the_output_ids(const RunRecord& r, const std::string& file, const std::string& at) {
  const GenerationResult& g = r.result;
  const bool first_prediction = r.params.max_new_tokens == 0;
  const std::size_t expected_steps = first_prediction ? 1 : g.output_ids.size();
  if (g.steps.size() != expected_steps || (first_prediction && !g.output_ids.empty()))
    violated(file, at + ".steps",
             "holds " + std::to_string(g.steps.size()) + " steps for " + std::to_string(g.output_ids.size()) +
                 " output ids; allowed: one step per output id (one step and no ids when max_new_tokens is 0)");
  for (std::size_t k = 0; k < g.steps.size(); ++k) {
    const std::optional<int64_t> expected = first_prediction ? std::nullopt : std::optional<int64_t>(g.output_ids[k]);
    if (g.steps[k].token_id != expected)
      violated(file, at + ".steps[" + std::to_string(k) + "].token_id",
               "found " + show(g.steps[k].token_id) + "; allowed: " +
                   (expected ? "output_ids[" + std::to_string(k) + "] = " + std::to_string(*expected) : std::string("null (max_new_tokens is 0)")));
  }
}

// stop.step counts the new tokens when the loop stopped.
void stop_step_counts_the_output(const RunRecord& r, const std::string& file, const std::string& at) {
  const int64_t made = static_cast<int64_t>(r.result.output_ids.size());
  if (r.result.stop_step != made)
    violated(file, at + ".stop.step",
             "found " + std::to_string(r.result.stop_step) + "; allowed: " + std::to_string(made) + ", the number of output ids");
}

// A step's candidate list names each token once (the writer takes the top N of one distribution);
// diff pairs candidates by id, so a repeated id would make a file disagree with itself (found by
// fuzz/evidence_fuzz.cpp).
void candidates_are_distinct(const RunRecord& r, const std::string& file, const std::string& at) {
  for (std::size_t k = 0; k < r.result.steps.size(); ++k) {
    std::map<int64_t, std::size_t> seen;
    const auto& top = r.result.steps[k].top;
    for (std::size_t c = 0; c < top.size(); ++c) {
      const auto [it, inserted] = seen.emplace(top[c].id, c);
      if (!inserted)
        violated(file, at + ".steps[" + std::to_string(k) + "].top[" + std::to_string(c) + "].id",
                 "found " + std::to_string(top[c].id) + ", already top[" + std::to_string(it->second) +
                     "]; allowed: each token once in a step's candidates");
    }
  }
}

}  // namespace

void check_evidence(const Evidence& e, const std::string& file) {
  ids_are_unique(e, file);
  for (std::size_t i = 0; i < e.runs.size(); ++i) {
    const RunRecord& r = e.runs[i];
    const std::string at = "runs[" + std::to_string(i) + "]";
    prompt_is_not_empty(r, file, at);
    steps_are_numbered_in_order(r, file, at);
    steps_are_the_output_ids(r, file, at);
    stop_step_counts_the_output(r, file, at);
    candidates_are_distinct(r, file, at);
  }
}

}  // namespace genrepro
