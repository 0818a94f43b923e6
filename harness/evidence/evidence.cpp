#include "evidence/evidence.hpp"

#include <cmath>
#include <ctime>
#include <limits>

#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "spec/experiment_spec.hpp"
#include "util/json_text.hpp"

namespace genrepro {

namespace {

using ojson = nlohmann::ordered_json;
using nlohmann::json;

constexpr int kIndent = 2;
constexpr size_t kShownValueChars = 60;

// JSON has no NaN or infinity; nlohmann would silently write null. Strings keep them readable
// and distinct from a missing value.
ojson real(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

template <class T>
ojson optional_value(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}

const char* stop_reason_name(StopReason r) { return to_string(r); }

ojson step_to_json(const StepRecord& s) {
  ojson top = ojson::array();
  for (const Candidate& c : s.top) {
    top.push_back({{"id", c.id}, {"text", c.text}, {"prob", real(c.prob)}, {"prob_scaled", real(c.prob_scaled)}});
  }
  return {{"step", s.step},
          {"token_id", s.token_id ? ojson(*s.token_id) : ojson(nullptr)},
          {"token_text", s.token_text},
          {"prob", real(s.prob)},
          {"prob_t1", real(s.prob_t1)},
          {"kept", s.kept},
          {"top", top},
          {"rest_mass", real(s.rest_mass)},
          {"margin", real(s.margin)},
          {"logit_margin", real(s.logit_margin)},
          {"entropy", real(s.entropy)}};
}

// Reads JSON written by someone else, naming the file and the JSON path of every problem.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw EvidenceError(file_ + ": " + where + ": " + what);
  }
  [[noreturn]] void wrong(const std::string& where, const json& v, const std::string& expected) const {
    std::string shown = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (shown.size() > kShownValueChars) shown = shown.substr(0, kShownValueChars) + "...";
    fail(where, "expected " + expected + ", found " + shown);
  }

  const json& field(const json& obj, const std::string& key, const std::string& where) const {
    if (!obj.is_object()) wrong(where, obj, "an object");
    const auto it = obj.find(key);
    if (it == obj.end()) fail(join(where, key), "missing; is this a genrepro evidence file of version " + std::string(kEvidenceSchema) + "?");
    return *it;
  }
  static std::string join(const std::string& where, const std::string& key) { return where.empty() ? key : where + "." + key; }

  std::string string(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (!v.is_string()) wrong(join(where, key), v, "a string");
    return v.get<std::string>();
  }
  std::optional<std::string> optional_string(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) wrong(join(where, key), v, "a string or null");
    return v.get<std::string>();
  }
  int64_t integer(const json& v, const std::string& where) const {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
      wrong(where, v, "an integer");
    return v.get<int64_t>();
  }
  int64_t integer(const json& obj, const std::string& key, const std::string& where) const {
    return integer(field(obj, key, where), join(where, key));
  }
  uint64_t unsigned_integer(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (!v.is_number_unsigned()) wrong(join(where, key), v, "a non-negative integer");
    return v.get<uint64_t>();
  }
  std::optional<int> optional_int(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (v.is_null()) return std::nullopt;
    return static_cast<int>(integer(v, join(where, key)));
  }
  double real(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (v.is_number()) return v.get<double>();
    if (v == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (v == "Infinity") return std::numeric_limits<double>::infinity();
    if (v == "-Infinity") return -std::numeric_limits<double>::infinity();
    wrong(join(where, key), v, "a number (or \"NaN\", \"Infinity\", \"-Infinity\")");
  }
  bool boolean(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (!v.is_boolean()) wrong(join(where, key), v, "true or false");
    return v.get<bool>();
  }
  const json& array(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (!v.is_array()) wrong(join(where, key), v, "a list");
    return v;
  }
  const json& object(const json& obj, const std::string& key, const std::string& where) const {
    const json& v = field(obj, key, where);
    if (!v.is_object()) wrong(join(where, key), v, "an object");
    return v;
  }
  std::vector<int64_t> ids(const json& obj, const std::string& key, const std::string& where) const {
    const json& list = array(obj, key, where);
    std::vector<int64_t> out;
    out.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) out.push_back(integer(list[i], join(where, key) + "[" + std::to_string(i) + "]"));
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

StepRecord step_from_json(const Reader& r, const json& j, const std::string& where) {
  StepRecord s;
  s.step = r.integer(j, "step", where);
  const json& token = r.field(j, "token_id", where);
  if (!token.is_null()) s.token_id = r.integer(token, where + ".token_id");
  s.token_text = r.string(j, "token_text", where);
  s.prob = r.real(j, "prob", where);
  s.prob_t1 = r.real(j, "prob_t1", where);
  s.kept = r.integer(j, "kept", where);
  const json& top = r.array(j, "top", where);
  for (size_t i = 0; i < top.size(); ++i) {
    const std::string at = where + ".top[" + std::to_string(i) + "]";
    Candidate c;
    c.id = r.integer(top[i], "id", at);
    c.text = r.string(top[i], "text", at);
    c.prob = r.real(top[i], "prob", at);
    c.prob_scaled = r.real(top[i], "prob_scaled", at);
    s.top.push_back(std::move(c));
  }
  s.rest_mass = r.real(j, "rest_mass", where);
  s.margin = r.real(j, "margin", where);
  s.logit_margin = r.real(j, "logit_margin", where);
  s.entropy = r.real(j, "entropy", where);
  return s;
}

StopReason stop_reason_from(const Reader& r, const std::string& name, const std::string& where) {
  for (StopReason s : {StopReason::eos, StopReason::max_new_tokens, StopReason::context_full}) {
    if (name == to_string(s)) return s;
  }
  r.fail(where, "\"" + name + "\" is not a stop reason; expected eos, max_new_tokens or context_full");
}

RunRecord run_from_json(const Reader& r, const json& j, const std::string& where) {
  RunRecord run;
  run.id = r.string(j, "id", where);
  run.experiment = r.string(j, "experiment", where);
  run.index = r.integer(j, "index", where);
  run.prompt_index = r.integer(j, "prompt_index", where);
  run.prompt = r.string(j, "prompt", where);
  try {
    run.params = params_from_json(r.object(j, "params", where), where + ".params");
  } catch (const SpecError& e) {
    throw EvidenceError(r.file() + ": " + e.what());
  }
  run.result.prompt_ids = r.ids(j, "prompt_ids", where);
  run.result.output_ids = r.ids(j, "output_ids", where);
  run.text = r.string(j, "text", where);
  run.continuation = r.string(j, "continuation", where);
  const json& stop = r.object(j, "stop", where);
  run.result.stop_reason = stop_reason_from(r, r.string(stop, "reason", where + ".stop"), where + ".stop.reason");
  run.result.stop_step = r.integer(stop, "step", where + ".stop");
  const json& steps = r.array(j, "steps", where);
  for (size_t i = 0; i < steps.size(); ++i) {
    run.result.steps.push_back(step_from_json(r, steps[i], where + ".steps[" + std::to_string(i) + "]"));
  }
  const auto timing = j.find("timing");
  if (timing != j.end()) run.result.seconds = r.real(*timing, "seconds", where + ".timing");
  return run;
}

}  // namespace

ojson environment_to_json(const Environment& env) {
  ojson blas = {{"library", optional_value(env.blas.library)},
                {"resolved", optional_value(env.blas.resolved)},
                {"vendor", env.blas.vendor},
                {"config", optional_value(env.blas.config)},
                {"core", optional_value(env.blas.core)},
                {"threads", optional_value(env.blas.threads)},
                {"loaded", env.blas.loaded}};
  ojson float_control = nullptr;
  if (env.float_control) {
    float_control = {{"flush_to_zero", env.float_control->flush_to_zero},
                     {"denormals_are_zero", env.float_control->denormals_are_zero},
                     {"rounding", env.float_control->rounding}};
  }
  ojson vars = ojson::object();
  for (const auto& [name, value] : env.numerics_env) vars[name] = optional_value(value);
  return {{"libtorch_version", env.libtorch_version},
          {"torch_config", env.torch_config},
          {"torch_parallel_info", env.torch_parallel_info},
          {"blas", blas},
          {"cpu_capability", env.cpu_capability},
          {"threads",
           {{"intra_op", env.threads.intra_op},
            {"inter_op", env.threads.inter_op},
            {"omp_max", optional_value(env.threads.omp_max)},
            {"runs_concurrently", env.threads.runs_concurrently}}},
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

ojson run_to_json(const RunRecord& r) {
  const GenerationResult& g = r.result;
  ojson steps = ojson::array();
  for (const StepRecord& s : g.steps) steps.push_back(step_to_json(s));
  const double tokens_per_second = g.seconds > 0 ? static_cast<double>(g.output_ids.size()) / g.seconds : 0.0;
  return {{"id", r.id},
          {"experiment", r.experiment},
          {"index", r.index},
          {"prompt_index", r.prompt_index},
          {"prompt", r.prompt},
          {"params", params_to_json(r.params)},
          {"prompt_ids", g.prompt_ids},
          {"output_ids", g.output_ids},
          {"text", r.text},
          {"continuation", r.continuation},
          {"stop", {{"reason", stop_reason_name(g.stop_reason)}, {"step", g.stop_step}}},
          {"steps", steps},
          {"timing", {{"seconds", real(g.seconds)}, {"tokens_per_second", real(tokens_per_second)}}}};
}

ojson model_to_json(const ModelInfo& m) {
  ojson files = ojson::object();
  for (const auto& [name, f] : m.files) files[name] = {{"sha256", f.sha256}, {"bytes", f.bytes}};
  return {{"source", m.source},
          {"path", m.path},
          {"config", ojson(m.config)},
          {"eos_token_id", m.eos_token_id},
          {"n_positions", m.n_positions},
          {"files", files}};
}

ojson evidence_to_json(const Evidence& e) {
  ojson experiments = ojson::array();
  for (const ExperimentRecord& x : e.experiments) {
    experiments.push_back({{"name", x.name}, {"path", x.path}, {"sha256", x.sha256}, {"spec", ojson(x.spec)}});
  }
  ojson runs = ojson::array();
  for (const RunRecord& r : e.runs) runs.push_back(run_to_json(r));
  return {{"schema", e.schema},
          {"genrepro", {{"version", e.genrepro.version}, {"git_commit", e.genrepro.git_commit}}},
          {"created_utc", e.created_utc},
          {"environment", environment_to_json(e.environment)},
          {"model", model_to_json(e.model)},
          {"experiments", experiments},
          {"runs", runs}};
}

Environment environment_from_json(const json& j, const std::string& file, const std::string& where) {
  const Reader r(file);
  Environment env;
  env.libtorch_version = r.string(j, "libtorch_version", where);
  env.torch_config = r.string(j, "torch_config", where);
  env.torch_parallel_info = r.string(j, "torch_parallel_info", where);
  const std::string bw = where + ".blas";
  const json& blas = r.object(j, "blas", where);
  env.blas.library = r.optional_string(blas, "library", bw);
  env.blas.resolved = r.optional_string(blas, "resolved", bw);
  env.blas.vendor = r.string(blas, "vendor", bw);
  env.blas.config = r.optional_string(blas, "config", bw);
  env.blas.core = r.optional_string(blas, "core", bw);
  env.blas.threads = r.optional_int(blas, "threads", bw);
  const json& loaded = r.array(blas, "loaded", bw);
  for (size_t i = 0; i < loaded.size(); ++i) {
    if (!loaded[i].is_string()) r.wrong(bw + ".loaded[" + std::to_string(i) + "]", loaded[i], "a string");
    env.blas.loaded.push_back(loaded[i].get<std::string>());
  }
  env.cpu_capability = r.string(j, "cpu_capability", where);
  const std::string tw = where + ".threads";
  const json& threads = r.object(j, "threads", where);
  env.threads.intra_op = static_cast<int>(r.integer(threads, "intra_op", tw));
  env.threads.inter_op = static_cast<int>(r.integer(threads, "inter_op", tw));
  env.threads.omp_max = r.optional_int(threads, "omp_max", tw);
  env.threads.runs_concurrently = static_cast<int>(r.integer(threads, "runs_concurrently", tw));
  const std::string cw = where + ".cpu";
  const json& cpu = r.object(j, "cpu", where);
  env.cpu.model = r.string(cpu, "model", cw);
  env.cpu.flags = r.string(cpu, "flags", cw);
  env.cpu.logical_cores = static_cast<int>(r.integer(cpu, "logical_cores", cw));
  env.cpu.usable_cores = static_cast<int>(r.integer(cpu, "usable_cores", cw));
  env.compiler = r.string(j, "compiler", where);
  env.os = r.string(j, "os", where);
  env.kernel = r.string(j, "kernel", where);
  env.dtype = r.string(j, "dtype", where);
  env.device = r.string(j, "device", where);
  const json& fc = r.field(j, "float_control", where);
  if (!fc.is_null()) {
    const std::string fw = where + ".float_control";
    env.float_control = FloatControl{r.boolean(fc, "flush_to_zero", fw), r.boolean(fc, "denormals_are_zero", fw),
                                     r.string(fc, "rounding", fw)};
  }
  const json& vars = r.object(j, "numerics_env", where);
  for (const auto& item : vars.items()) {
    if (item.value().is_null()) {
      env.numerics_env.emplace_back(item.key(), std::nullopt);
    } else if (item.value().is_string()) {
      env.numerics_env.emplace_back(item.key(), item.value().get<std::string>());
    } else {
      r.wrong(where + ".numerics_env." + item.key(), item.value(), "a string or null");
    }
  }
  return env;
}

RunRecord run_from_json(const json& j, const std::string& file, const std::string& where) {
  return run_from_json(Reader(file), j, where);
}

Evidence evidence_from_json(const json& j, const std::string& file) {
  const Reader r(file);
  if (!j.is_object()) r.wrong("(top level)", j, "an object");
  Evidence e;
  e.schema = r.string(j, "schema", "");
  if (e.schema != kEvidenceSchema)
    r.fail("schema", "\"" + e.schema + "\" is not " + kEvidenceSchema + "; this genrepro reads only that version");
  const json& tool = r.object(j, "genrepro", "");
  e.genrepro.version = r.string(tool, "version", "genrepro");
  e.genrepro.git_commit = r.string(tool, "git_commit", "genrepro");
  e.created_utc = r.string(j, "created_utc", "");
  e.environment = environment_from_json(r.object(j, "environment", ""), file, "environment");
  const json& model = r.object(j, "model", "");
  e.model.source = r.string(model, "source", "model");
  e.model.path = r.string(model, "path", "model");
  e.model.config = r.object(model, "config", "model");
  e.model.eos_token_id = r.integer(model, "eos_token_id", "model");
  e.model.n_positions = r.integer(model, "n_positions", "model");
  for (const auto& item : r.object(model, "files", "model").items()) {
    const std::string at = "model.files." + item.key();
    e.model.files[item.key()] = FileRecord{r.string(item.value(), "sha256", at), r.unsigned_integer(item.value(), "bytes", at)};
  }
  const json& experiments = r.array(j, "experiments", "");
  for (size_t i = 0; i < experiments.size(); ++i) {
    const std::string at = "experiments[" + std::to_string(i) + "]";
    e.experiments.push_back(ExperimentRecord{r.string(experiments[i], "name", at), r.string(experiments[i], "path", at),
                                             r.string(experiments[i], "sha256", at), r.object(experiments[i], "spec", at)});
  }
  const json& runs = r.array(j, "runs", "");
  for (size_t i = 0; i < runs.size(); ++i) e.runs.push_back(run_from_json(r, runs[i], "runs[" + std::to_string(i) + "]"));
  return e;
}

std::string evidence_text(const Evidence& e) {
  // Token texts are already valid UTF-8 (the tokenizer shows partial bytes visibly); replace is
  // a guard so that a bug there can never make the writer throw after a long run.
  return evidence_to_json(e).dump(kIndent, ' ', false, ojson::error_handler_t::replace) + "\n";
}

void write_evidence(const std::string& path, const Evidence& e) { write_file_atomically(path, evidence_text(e)); }

Evidence read_evidence(const std::string& path) {
  std::string text, problem;
  if (!read_text_file(path, text, problem, kMaxEvidenceFileBytes))
    throw EvidenceError(path + ": " + problem + "; give the path of an evidence.json written by genrepro run");
  JsonParseOutcome parsed = parse_json_text(text);
  if (!parsed.ok()) throw EvidenceError(path + ": " + parsed.problem);
  return evidence_from_json(parsed.value, path);
}

std::string utc_timestamp_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace genrepro
