#pragma once
// Small hand-made evidence for the evidence tests, always structurally valid (what the reader
// accepts: steps numbered in order and equal to output_ids, stop.step the number of output ids),
// so a test changes exactly the one thing it is about. The distributions are written out by
// hand so each expected verdict can be checked on paper.
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "evidence/evidence.hpp"
#include "params/experiment_file.hpp"

namespace genrepro::test {

// A step whose final distribution equals its unfiltered one (T = 1, no filter) unless the caller
// overrides top[].prob. `top` is {id, prob} by descending probability; `chosen` is the token
// drawn or picked.
inline StepRecord make_step(int64_t k, int64_t chosen, const std::vector<std::pair<int64_t, double>>& top, int64_t kept = 1) {
  StepRecord s;
  s.step = k;
  s.token_id = chosen;
  s.token_text = " t" + std::to_string(chosen);
  double sum = 0;
  for (const auto& [id, p] : top) {
    s.top.push_back(Candidate{id, " t" + std::to_string(id), p, p});
    sum += p;
    s.entropy -= p * std::log(p);
    if (id == chosen) s.prob = s.prob_t1 = p;
  }
  s.kept = kept;
  s.rest_mass = 1 - sum;
  s.margin = top.size() > 1 ? top[0].second - top[1].second : top[0].second;
  s.logit_margin = top.size() > 1 ? std::log(top[0].second / top[1].second) : 0.0;
  return s;
}

inline RunParams make_params(DecodeMode mode, int64_t max_new_tokens = 3) {
  RunParams p;
  p.sampling.mode = mode;
  p.sampling.seed = 42;
  p.max_new_tokens = max_new_tokens;
  return p;
}

// A run whose outputs are its steps' tokens: output_ids, continuation and text follow from them.
inline RunRecord make_run(const std::string& id, DecodeMode mode, const std::vector<StepRecord>& steps,
                          const std::string& experiment = "exp") {
  RunRecord r;
  r.id = id;
  r.experiment = experiment;
  r.prompt = "the river bank was";
  r.params = make_params(mode);
  // The reader wants every step's list exactly this long (docs/validation.md).
  if (!steps.empty()) r.params.top_candidates = static_cast<int64_t>(steps.front().top.size());
  // Stopped by the cap: as many steps as the cap allows (a test that means EOS says so).
  if (!steps.empty()) r.params.max_new_tokens = static_cast<int64_t>(steps.size());
  r.result.prompt_ids = {1169, 7850, 3331, 373};
  for (const StepRecord& s : steps) {
    r.result.output_ids.push_back(*s.token_id);
    r.continuation += s.token_text;
  }
  r.text = r.prompt + r.continuation;
  r.result.steps = steps;
  r.result.stop_reason = StopReason::max_new_tokens;
  r.result.stop_step = static_cast<int64_t>(steps.size());
  r.result.seconds = 0.5;
  return r;
}

// Three greedy steps with clear winners: the baseline most tests change one thing in.
inline std::vector<StepRecord> greedy_steps() {
  return {make_step(0, 10, {{10, 0.6}, {11, 0.3}}), make_step(1, 20, {{20, 0.5}, {21, 0.2}}),
          make_step(2, 30, {{30, 0.7}, {31, 0.2}})};
}

// A complete document around `runs`, one experiments[] entry per experiment the runs name.
inline Evidence make_evidence(const std::vector<RunRecord>& runs) {
  Evidence e;
  e.genrepro = {"0.1.0", "abc"};
  e.created_utc = "2026-01-01T00:00:00Z";
  e.environment.libtorch_version = "1.13.0";
  e.environment.cpu_capability = "AVX2";
  e.environment.threads = {1, 1, 1, 1};
  e.environment.numerics_env = {{"OMP_NUM_THREADS", std::nullopt}};
  e.model.source = "fixture";
  e.model.path = "/tmp/a";
  e.model.config = {{"vocab_size", 50257}};
  e.model.eos_token_id = 50256;
  e.model.n_positions = 1024;
  e.model.files["model.safetensors"] = {std::string(64, 'a'), 123};
  std::set<std::string> named;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    e.runs.push_back(runs[i]);
    e.runs.back().index = static_cast<int64_t>(i);
    if (named.insert(runs[i].experiment).second)
      e.experiments.push_back({runs[i].experiment, "experiments/" + runs[i].experiment + ".json", "00", nlohmann::json::object()});
  }
  return e;
}

// Evidence as the writer makes it consistent (docs/validation.md, "Consistency"), for tests that
// read it back through read_evidence: each run's prompt names the id the test gave it, at a
// prompt index derived from that id alone (so a run keeps its new id whatever else the evidence
// holds, and runs a test tells apart by id stay apart); its params are its experiment's grid
// point and its id their hash; each experiment's spec expands to its runs.
inline constexpr std::size_t kConsistentPromptSlots = 256;

inline std::size_t prompt_slot(const std::string& given_id) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across runs and platforms
  for (unsigned char c : given_id) h = (h ^ c) * 16777619u;
  return h % kConsistentPromptSlots;
}

inline void make_consistent(Evidence& e) {
  std::map<std::string, nlohmann::json> specs;
  for (RunRecord& r : e.runs) {
    r.prompt = "the river bank was (" + r.id + ")";
    r.text = r.prompt + r.continuation;
    r.prompt_index = static_cast<int64_t>(prompt_slot(r.id));
    nlohmann::json& spec = specs[r.experiment];
    if (spec.is_null()) {
      nlohmann::json prompts = nlohmann::json::array();
      for (std::size_t i = 0; i < kConsistentPromptSlots; ++i) prompts.push_back("unused prompt " + std::to_string(i));
      spec = {{"name", r.experiment}, {"prompts", prompts}, {"record", {{"top_candidates", r.params.top_candidates}}},
              {"runs", nlohmann::json::array()}};
    }
    spec["prompts"][r.prompt_index] = r.prompt;
    const nlohmann::json p = nlohmann::json(params_to_json(r.params));
    nlohmann::json entry = {{"mode", p["mode"]}, {"max_new_tokens", p["max_new_tokens"]}, {"stop_at_eos", p["stop_at_eos"]},
                            {"use_cache", p["use_cache"]}};
    if (r.params.sampling.mode == DecodeMode::sample)
      for (const char* key : {"temperature", "top_k", "top_p", "seed", "sampler_order", "top_p_rule", "rng"}) entry[key] = p[key];
    bool known = false;
    for (const nlohmann::json& x : spec["runs"]) known |= x == entry;
    if (!known) spec["runs"].push_back(entry);
  }
  std::map<std::string, ExperimentSpec> expanded;
  for (auto& [name, spec] : specs) expanded.emplace(name, parse_experiment(spec.dump(), name + ".json", RunBudget{kMaxRunsCeiling, 0}));
  for (RunRecord& r : e.runs) {
    const ExperimentSpec& x = expanded.at(r.experiment);
    for (const ExpandedRun& planned : x.runs) {
      if (planned.prompt_index != r.prompt_index || planned.params.sampling.mode != r.params.sampling.mode) continue;
      const bool same = r.params.sampling.mode == DecodeMode::greedy
                            ? planned.params.max_new_tokens == r.params.max_new_tokens && planned.params.stop_at_eos == r.params.stop_at_eos &&
                                  planned.params.use_cache == r.params.use_cache
                            : params_to_json(planned.params) == params_to_json(r.params);
      if (!same) continue;
      r.params = planned.params;
      r.id = planned.id;
      break;
    }
  }
  e.experiments.clear();
  for (const auto& [name, x] : expanded) e.experiments.push_back({name, "experiments/" + name + ".json", x.sha256, x.spec});
}

// The id make_consistent gives `r` (it depends on the run alone, not on the rest of the evidence).
inline std::string consistent_id(RunRecord r) {
  Evidence e;
  e.runs = {std::move(r)};
  make_consistent(e);
  return e.runs[0].id;
}

}  // namespace genrepro::test
