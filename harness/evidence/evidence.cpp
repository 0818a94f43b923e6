// The writer: typed evidence -> JSON in the documented key order -> text -> file.
#include "evidence/evidence.hpp"

#include <algorithm>

#include <cmath>
#include <ctime>
#include <limits>

#include "params/experiment_file.hpp"
#include "util/atomic_file.hpp"

namespace genrepro {

namespace {

constexpr int kIndent = 2;

// The spellings of the values JSON cannot hold; nlohmann would silently write null. Strings
// keep them readable and distinct from a missing value.
constexpr const char* kNaN = "NaN";
constexpr const char* kInfinity = "Infinity";
constexpr const char* kMinusInfinity = "-Infinity";

template <class T>
OrderedJson optional_value(const std::optional<T>& v) {
  return v ? OrderedJson(*v) : OrderedJson(nullptr);
}

OrderedJson step_to_json(const StepRecord& s) {
  OrderedJson top = OrderedJson::array();
  for (const Candidate& c : s.top) {
    top.push_back({{"id", c.id}, {"text", c.text}, {"prob", real_to_json(c.prob)}, {"prob_scaled", real_to_json(c.prob_scaled)}});
  }
  OrderedJson j = {{"step", s.step},
          {"token_id", s.token_id ? OrderedJson(*s.token_id) : OrderedJson(nullptr)},
          {"token_text", s.token_text},
          {"prob", real_to_json(s.prob)},
          {"prob_t1", real_to_json(s.prob_t1)},
          {"kept", s.kept},
          {"top", top},
          {"rest_mass", real_to_json(s.rest_mass)},
          {"margin", real_to_json(s.margin)},
          {"logit_margin", real_to_json(s.logit_margin)},
          {"entropy", real_to_json(s.entropy)}};
  // How close a sampled step's draw came to another token; only where a draw decided.
  if (s.draw)
    j["draw"] = {{"rule", to_string(s.draw->rule)}, {"margin", real_to_json(s.draw->margin)}, {"runner_up", s.draw->runner_up}};
  // A framework run's stages (an article run has none: its steps hold the article's keys only).
  if (!s.stages.empty()) {
    OrderedJson stages = OrderedJson::array();
    for (const StageKept& k : s.stages) stages.push_back({{"stage", k.stage}, {"kept", k.kept}});
    j["stages"] = std::move(stages);
  }
  // The logits digest last, so every key before it keeps its place; absent in older evidence.
  if (s.logits_digest) j["logits_digest"] = *s.logits_digest;
  return j;
}

}  // namespace

OrderedJson environment_to_json(const Environment& env) {
  OrderedJson blas = {{"library", optional_value(env.blas.library)},
                      {"resolved", optional_value(env.blas.resolved)},
                      {"vendor", env.blas.vendor},
                      {"config", optional_value(env.blas.config)},
                      {"core", optional_value(env.blas.core)},
                      {"threads", optional_value(env.blas.threads)},
                      {"loaded", env.blas.loaded}};
  OrderedJson float_control = nullptr;
  if (env.float_control) {
    float_control = {{"flush_to_zero", env.float_control->flush_to_zero},
                     {"denormals_are_zero", env.float_control->denormals_are_zero},
                     {"rounding", env.float_control->rounding}};
  }
  OrderedJson vars = OrderedJson::object();
  for (const auto& [name, value] : env.numerics_env) vars[name] = optional_value(value);
  OrderedJson threads = {{"intra_op", env.threads.intra_op},
                         {"inter_op", env.threads.inter_op},
                         {"omp_max", optional_value(env.threads.omp_max)}};
  if (env.threads.runs_concurrently) threads["runs_concurrently"] = *env.threads.runs_concurrently;
  return {{"libtorch_version", env.libtorch_version},
          {"torch_config", env.torch_config},
          {"torch_parallel_info", env.torch_parallel_info},
          {"blas", blas},
          {"cpu_capability", env.cpu_capability},
          {"threads", threads},
          {"cpu",
           {{"model", env.cpu.model},
            {"flags", env.cpu.flags},
            {"logical_cores", env.cpu.logical_cores},
            {"usable_cores", env.cpu.usable_cores}}},
          {"compiler", env.compiler},
          {"os", env.os},
          {"kernel", env.kernel},
          {"dtype", env.dtype},
          {"device", env.device},
          {"float_control", float_control},
          {"numerics_env", vars}};
}

OrderedJson run_to_json(const RunRecord& r) {
  const GenerationResult& g = r.result;
  OrderedJson steps = OrderedJson::array();
  for (const StepRecord& s : g.steps) steps.push_back(step_to_json(s));
  OrderedJson run = {{"id", r.id},
                     {"experiment", r.experiment},
                     {"index", r.index},
                     {"prompt_index", r.prompt_index},
                     {"prompt", r.prompt},
                     {"params", params_to_json(r.params)},
                     {"prompt_ids", g.prompt_ids},
                     {"output_ids", g.output_ids},
                     {"text", r.text},
                     {"continuation", r.continuation},
                     {"stop", {{"reason", to_string(g.stop_reason)}, {"step", g.stop_step}}},
                     {"steps", steps}};
  if (g.seconds) {
    const double seconds = *g.seconds;
    const double tokens_per_second = seconds > 0 ? static_cast<double>(g.output_ids.size()) / seconds : 0.0;
    run["timing"] = {{"seconds", real_to_json(seconds)}, {"tokens_per_second", real_to_json(tokens_per_second)}};
  }
  return run;
}

OrderedJson model_to_json(const ModelInfo& m) {
  OrderedJson files = OrderedJson::object();
  for (const auto& [name, f] : m.files) files[name] = {{"sha256", f.sha256}, {"bytes", f.bytes}};
  return {{"source", m.source},
          {"path", m.path},
          {"config", OrderedJson(m.config)},
          {"eos_token_id", m.eos_token_id},
          {"n_positions", m.n_positions},
          {"files", files}};
}

OrderedJson llama_cpp_to_json(const LlamaCppRecord& l) {
  return {{"library", l.library},
          {"library_sha256", l.library_sha256},
          {"ggml_version", l.ggml_version},
          {"ggml_commit", l.ggml_commit},
          {"cpu_backend", l.cpu_backend},
          {"system_info", l.system_info},
          {"kv_type", l.kv_type},
          {"flash_attn", l.flash_attn},
          {"threads", l.threads},
          {"n_ubatch", l.n_ubatch},
          {"gguf_sha256", l.gguf_sha256},
          {"gguf_export_revision", l.gguf_export_revision}};
}

OrderedJson evidence_to_json(const Evidence& e) {
  OrderedJson experiments = OrderedJson::array();
  for (const ExperimentRecord& x : e.experiments) {
    experiments.push_back({{"name", x.name}, {"path", x.path}, {"sha256", x.sha256}, {"spec", OrderedJson(x.spec)}});
  }
  OrderedJson runs = OrderedJson::array();
  for (const RunRecord& r : e.runs) runs.push_back(run_to_json(r));
  OrderedJson j = {{"schema", e.schema}, {"genrepro", {{"version", e.genrepro.version}, {"git_commit", e.genrepro.git_commit}}}};
  if (e.created_utc) j["created_utc"] = *e.created_utc;  // volatile: a golden has none
  j["environment"] = environment_to_json(e.environment);
  if (e.numerics) j["numerics"] = numerics_to_json(*e.numerics);
  j["model"] = model_to_json(e.model);
  j["experiments"] = std::move(experiments);
  j["runs"] = std::move(runs);
  if (!e.run_environments.empty()) {
    OrderedJson others = OrderedJson::array();
    for (const RunEnvironment& re : e.run_environments)
      others.push_back({{"runs", re.runs}, {"environment", environment_to_json(re.environment)}});
    j["run_environments"] = std::move(others);
  }
  if (e.resumed) j["resumed"] = resume_to_json(*e.resumed);  // volatile: a golden has none
  if (e.llama_cpp) j["llama_cpp"] = llama_cpp_to_json(*e.llama_cpp);
  return j;
}

const Environment& environment_of_run(const Evidence& e, int64_t index) {
  for (const RunEnvironment& re : e.run_environments)
    if (std::binary_search(re.runs.begin(), re.runs.end(), index)) return re.environment;
  return e.environment;
}

OrderedJson real_to_json(double v) {
  if (std::isnan(v)) return kNaN;
  if (std::isinf(v)) return v > 0 ? kInfinity : kMinusInfinity;
  return v;
}

std::optional<double> real_from_json(const OrderedJson& v) {
  if (v.is_number()) return v.get<double>();
  if (v == kNaN) return std::numeric_limits<double>::quiet_NaN();
  if (v == kInfinity) return std::numeric_limits<double>::infinity();
  if (v == kMinusInfinity) return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

std::string evidence_text(const Evidence& e) {
  // Token texts are already valid UTF-8 (the tokenizer shows partial bytes visibly); replace is
  // a guard so that a bug there can never make the writer throw after a long run.
  return json_document_text(evidence_to_json(e), kIndent) + "\n";
}

void write_evidence(const std::string& path, const Evidence& e) { write_file_atomically(path, evidence_text(e)); }

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace genrepro
