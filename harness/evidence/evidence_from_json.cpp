// Reading evidence, second stage: JSON -> typed values. Every field the writer writes is
// required, with the type the writer gives it (the volatile fields may be absent: a golden has
// none). A problem is one line naming the file, the JSON path, the value found and what is
// allowed. What must hold between fields is the third stage's (evidence_checks.cpp).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <limits>
#include <set>

#include "evidence/evidence.hpp"
#include "evidence/evidence_consistency.hpp"
#include "params/experiment_file.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// Strings are shown up to this many bytes in messages.
constexpr std::size_t kShownStringChars = 40;
constexpr const char* kReal = "a number (or \"NaN\", \"Infinity\", \"-Infinity\")";

// A value as messages show it: its kind, and for scalars the value itself.
std::string describe(const OrderedJson& j) {
  switch (j.type()) {
    case OrderedJson::value_t::null: return "null";
    case OrderedJson::value_t::boolean: return std::string("boolean ") + (j.get<bool>() ? "true" : "false");
    case OrderedJson::value_t::string: {
      std::string s = j.get<std::string>();
      if (s.size() > kShownStringChars) s = s.substr(0, kShownStringChars) + "...";
      return "string " + OrderedJson(s).dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
    }
    case OrderedJson::value_t::object: return "an object";
    case OrderedJson::value_t::array: return "an array of " + std::to_string(j.size());
    case OrderedJson::value_t::binary: return "binary data";
    case OrderedJson::value_t::discarded: return "nothing";
    default: return "number " + j.dump();
  }
}

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string index(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

// Typed access into one file's JSON. `path` is always the JSON path of the object read from.
class Fields {
 public:
  explicit Fields(const std::string& file) : file_(file) {}
  const std::string& file() const { return file_; }

  [[noreturn]] void wrong(const std::string& path, const std::string& expected, const OrderedJson* found) const {
    const std::string shown = found ? describe(*found) : std::string("nothing (the key is missing)");
    throw EvidenceError(file_ + ": " + path + ": expected " + expected + ", found " + shown + "; " + kRegenerateEvidenceHint);
  }

  const OrderedJson& get(const OrderedJson& obj, const std::string& path, const char* key, const char* expected) const {
    if (!obj.is_object()) wrong(path, "an object", &obj);
    const auto it = obj.find(key);
    if (it == obj.end()) wrong(join(path, key), expected, nullptr);
    return *it;
  }
  const OrderedJson& object(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "an object");
    if (!v.is_object()) wrong(join(path, key), "an object", &v);
    return v;
  }
  const OrderedJson& array(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "an array");
    if (!v.is_array()) wrong(join(path, key), "an array", &v);
    return v;
  }
  std::string string(const OrderedJson& obj, const std::string& path, const char* key) const {
    return string_value(get(obj, path, key, "a string"), join(path, key));
  }
  std::string string_value(const OrderedJson& v, const std::string& path) const {
    if (!v.is_string()) wrong(path, "a string", &v);
    return v.get<std::string>();
  }
  std::optional<std::string> string_or_null(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "a string or null");
    if (v.is_null()) return std::nullopt;
    if (!v.is_string()) wrong(join(path, key), "a string or null", &v);
    return v.get<std::string>();
  }
  bool boolean(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "true or false");
    if (!v.is_boolean()) wrong(join(path, key), "true or false", &v);
    return v.get<bool>();
  }
  int64_t integer(const OrderedJson& obj, const std::string& path, const char* key) const {
    return integer_value(get(obj, path, key, "an integer"), join(path, key));
  }
  int64_t integer_value(const OrderedJson& v, const std::string& path) const {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)))
      wrong(path, "an integer", &v);
    return v.get<int64_t>();
  }
  std::optional<int64_t> integer_or_null(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "an integer or null");
    if (v.is_null()) return std::nullopt;
    if (!v.is_number_integer()) wrong(join(path, key), "an integer or null", &v);
    return integer_value(v, join(path, key));
  }
  // The fields the writer holds in an int (thread and core counts).
  int small_integer(const OrderedJson& obj, const std::string& path, const char* key) const {
    return small(get(obj, path, key, "an integer"), join(path, key));
  }
  std::optional<int> small_integer_or_null(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "an integer or null");
    if (v.is_null()) return std::nullopt;
    return small(v, join(path, key));
  }
  uint64_t unsigned_integer(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, "a non-negative integer");
    if (!v.is_number_unsigned()) wrong(join(path, key), "a non-negative integer", &v);
    return v.get<uint64_t>();
  }
  // The one rule for reals, the writer's (real_to_json / real_from_json).
  double real(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& v = get(obj, path, key, kReal);
    const std::optional<double> r = real_from_json(v);
    if (!r) wrong(join(path, key), kReal, &v);
    return *r;
  }
  std::vector<int64_t> integers(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& list = array(obj, path, key);
    std::vector<int64_t> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back(integer_value(list[i], index(join(path, key), i)));
    return out;
  }
  std::vector<std::string> strings(const OrderedJson& obj, const std::string& path, const char* key) const {
    const OrderedJson& list = array(obj, path, key);
    std::vector<std::string> out;
    out.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back(string_value(list[i], index(join(path, key), i)));
    return out;
  }

 private:
  int small(const OrderedJson& v, const std::string& path) const {
    const int64_t n = integer_value(v, path);
    if (n < INT_MIN || n > INT_MAX) wrong(path, "an integer from " + std::to_string(INT_MIN) + " to " + std::to_string(INT_MAX), &v);
    return static_cast<int>(n);
  }

  const std::string& file_;
};

Candidate candidate_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  Candidate c;
  c.id = f.integer(j, path, "id");
  c.text = f.string(j, path, "text");
  c.prob = f.real(j, path, "prob");
  c.prob_scaled = f.real(j, path, "prob_scaled");
  return c;
}

DrawRecord draw_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  DrawRecord d;
  const std::string rule = f.string(j, path, "rule");
  if (rule == to_string(DrawRule::exponential_race)) d.rule = DrawRule::exponential_race;
  else if (rule == to_string(DrawRule::inverse_cdf)) d.rule = DrawRule::inverse_cdf;
  else f.wrong(path + ".rule", "\"exponential_race\" or \"inverse_cdf\"", &j["rule"]);
  d.margin = f.real(j, path, "margin");
  d.runner_up = f.integer(j, path, "runner_up");
  return d;
}

StepRecord step_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  StepRecord s;
  s.step = f.integer(j, path, "step");
  s.token_id = f.integer_or_null(j, path, "token_id");
  s.token_text = f.string(j, path, "token_text");
  s.prob = f.real(j, path, "prob");
  s.prob_t1 = f.real(j, path, "prob_t1");
  s.kept = f.integer(j, path, "kept");
  const OrderedJson& top = f.array(j, path, "top");
  for (std::size_t i = 0; i < top.size(); ++i) s.top.push_back(candidate_from_json(f, top[i], index(path + ".top", i)));
  s.rest_mass = f.real(j, path, "rest_mass");
  s.margin = f.real(j, path, "margin");
  s.logit_margin = f.real(j, path, "logit_margin");
  s.entropy = f.real(j, path, "entropy");
  // The draw: optional (greedy steps, and older evidence, have none); its values are
  // checked in evidence_checks.cpp, against the params in evidence_consistency.cpp.
  if (j.is_object() && j.contains("draw")) s.draw = draw_from_json(f, f.object(j, path, "draw"), path + ".draw");
  // A framework run's stages, optional (an article run has none).
  if (j.is_object() && j.contains("stages")) {
    const OrderedJson& stages = f.array(j, path, "stages");
    for (std::size_t i = 0; i < stages.size(); ++i) {
      const std::string at = index(path + ".stages", i);
      s.stages.push_back({f.string(stages[i], at, "stage"), f.integer(stages[i], at, "kept")});
    }
  }
  // The logits digest: optional (older evidence, or evidence from other tools, has none); its form is
  // checked with the values (evidence_checks.cpp).
  if (j.is_object() && j.contains("logits_digest")) s.logits_digest = f.string(j, path, "logits_digest");
  return s;
}

StopReason stop_reason_from_json(const Fields& f, const OrderedJson& stop, const std::string& path) {
  const std::string name = f.string(stop, path, "reason");
  for (StopReason r : {StopReason::eos, StopReason::max_new_tokens, StopReason::context_full})
    if (name == to_string(r)) return r;
  f.wrong(path + ".reason", "\"eos\", \"max_new_tokens\" or \"context_full\"", &stop["reason"]);
}

RunParams params_from_evidence(const Fields& f, const OrderedJson& run, const std::string& path) {
  const OrderedJson& params = f.object(run, path, "params");
  try {
    return params_from_json(nlohmann::json(params), path + ".params");
  } catch (const SpecError& e) {
    throw EvidenceError(f.file() + ": " + e.what() + "; " + kRegenerateEvidenceHint);
  }
}

RunRecord run_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  RunRecord run;
  run.id = f.string(j, path, "id");
  run.experiment = f.string(j, path, "experiment");
  run.index = f.integer(j, path, "index");
  run.prompt_index = f.integer(j, path, "prompt_index");
  run.prompt = f.string(j, path, "prompt");
  run.params = params_from_evidence(f, j, path);
  run.result.prompt_ids = f.integers(j, path, "prompt_ids");
  run.result.output_ids = f.integers(j, path, "output_ids");
  run.text = f.string(j, path, "text");
  run.continuation = f.string(j, path, "continuation");
  const OrderedJson& stop = f.object(j, path, "stop");
  run.result.stop_reason = stop_reason_from_json(f, stop, path + ".stop");
  run.result.stop_step = f.integer(stop, path + ".stop", "step");
  const OrderedJson& steps = f.array(j, path, "steps");
  for (std::size_t i = 0; i < steps.size(); ++i)
    run.result.steps.push_back(step_from_json(f, steps[i], index(path + ".steps", i)));
  if (j.contains("timing")) run.result.seconds = f.real(j["timing"], path + ".timing", "seconds");  // volatile
  return run;
}

BlasInfo blas_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  BlasInfo b;
  b.library = f.string_or_null(j, path, "library");
  b.resolved = f.string_or_null(j, path, "resolved");
  b.vendor = f.string(j, path, "vendor");
  b.config = f.string_or_null(j, path, "config");
  b.core = f.string_or_null(j, path, "core");
  b.threads = f.small_integer_or_null(j, path, "threads");
  b.loaded = f.strings(j, path, "loaded");
  return b;
}

ThreadSettings threads_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  ThreadSettings t;
  t.intra_op = f.small_integer(j, path, "intra_op");
  t.inter_op = f.small_integer(j, path, "inter_op");
  t.omp_max = f.small_integer_or_null(j, path, "omp_max");
  t.runs_concurrently = std::nullopt;  // volatile
  if (j.contains("runs_concurrently")) t.runs_concurrently = f.small_integer(j, path, "runs_concurrently");
  return t;
}

std::optional<FloatControl> float_control_from_json(const Fields& f, const OrderedJson& env, const std::string& path) {
  const OrderedJson& fc = f.get(env, path, "float_control", "an object or null");
  if (fc.is_null()) return std::nullopt;
  const std::string at = join(path, "float_control");
  if (!fc.is_object()) f.wrong(at, "an object or null", &fc);
  return FloatControl{f.boolean(fc, at, "flush_to_zero"), f.boolean(fc, at, "denormals_are_zero"), f.string(fc, at, "rounding")};
}

Environment environment_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  Environment env;
  env.libtorch_version = f.string(j, path, "libtorch_version");
  env.torch_config = f.string(j, path, "torch_config");
  env.torch_parallel_info = f.string(j, path, "torch_parallel_info");
  env.blas = blas_from_json(f, f.object(j, path, "blas"), join(path, "blas"));
  env.cpu_capability = f.string(j, path, "cpu_capability");
  env.threads = threads_from_json(f, f.object(j, path, "threads"), join(path, "threads"));
  const OrderedJson& cpu = f.object(j, path, "cpu");
  const std::string cpu_path = join(path, "cpu");
  env.cpu = CpuInfo{f.string(cpu, cpu_path, "model"), f.string(cpu, cpu_path, "flags"),
                    f.small_integer(cpu, cpu_path, "logical_cores"), f.small_integer(cpu, cpu_path, "usable_cores")};
  env.compiler = f.string(j, path, "compiler");
  env.os = f.string(j, path, "os");
  env.kernel = f.string(j, path, "kernel");
  env.dtype = f.string(j, path, "dtype");
  env.device = f.string(j, path, "device");
  env.float_control = float_control_from_json(f, j, path);
  const OrderedJson& vars = f.object(j, path, "numerics_env");
  for (auto it = vars.begin(); it != vars.end(); ++it)  // in the file's order, which is the writer's
    env.numerics_env.emplace_back(it.key(), f.string_or_null(vars, join(path, "numerics_env"), it.key().c_str()));
  return env;
}

ModelInfo model_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  ModelInfo m;
  m.source = f.string(j, path, "source");
  m.path = f.string(j, path, "path");
  m.config = nlohmann::json(f.object(j, path, "config"));
  m.eos_token_id = f.integer(j, path, "eos_token_id");
  m.n_positions = f.integer(j, path, "n_positions");
  const OrderedJson& files = f.object(j, path, "files");
  for (auto it = files.begin(); it != files.end(); ++it) {
    const std::string at = join(path, "files." + it.key());
    m.files[it.key()] = FileRecord{f.string(it.value(), at, "sha256"), f.unsigned_integer(it.value(), at, "bytes")};
  }
  return m;
}

ExperimentRecord experiment_from_json(const Fields& f, const OrderedJson& j, const std::string& path) {
  return ExperimentRecord{f.string(j, path, "name"), f.string(j, path, "path"), f.string(j, path, "sha256"),
                          nlohmann::json(f.object(j, path, "spec"))};
}

// A file without the schema string is not evidence; another version is not this build's.
void check_schema(const OrderedJson& j, const std::string& file) {
  if (!j.is_object() || !j.contains("schema"))
    throw EvidenceError(file + ": schema: missing; not genrepro evidence (no top-level \"schema\" key); " + kGiveEvidenceHint);
  const OrderedJson& schema = j["schema"];
  if (!schema.is_string() || schema.get<std::string>() != kEvidenceSchema)
    throw EvidenceError(file + ": schema " + describe(schema) + ", this build reads \"" + kEvidenceSchema +
                        "\"; regenerate the evidence with this genrepro (or use the genrepro that wrote it)");
}

std::optional<NumericsRecord> numerics_from_json(const Fields& f, const OrderedJson& j) {
  if (!j.contains("numerics")) return std::nullopt;
  const OrderedJson& block = f.object(j, "", "numerics");
  NumericsRecord n;
  const std::string mode = f.string(block, "numerics", "mode");
  const std::optional<NumericsMode> parsed = parse_numerics_mode(mode);
  if (!parsed)
    throw EvidenceError(f.file() + ": numerics.mode: \"" + mode + "\" is not a numerics mode; allowed: reference, tiled, strict");
  n.mode = *parsed;
  if (n.mode == NumericsMode::tiled) {
    n.tile = f.small_integer(block, "numerics", "tile");
    if (n.tile < 1)
      throw EvidenceError(f.file() + ": numerics.tile: " + std::to_string(n.tile) + "; allowed: a whole number >= 1");
  }
  if (n.mode == NumericsMode::strict) {
    n.kernel_revision = f.string(block, "numerics", "kernel_revision");
    if (n.kernel_revision.empty())
      throw EvidenceError(f.file() + ": numerics.kernel_revision: \"\"; allowed: the name of the strict kernels' operation order, e.g. \"strict-1\"");
  }
  if (block.contains("inexact_batch")) n.inexact_batch = f.boolean(block, "numerics", "inexact_batch");
  if (block.contains("cpu_kernels")) {
    const OrderedJson& k = f.object(block, "numerics", "cpu_kernels");
    const std::string setting = f.string(k, "numerics.cpu_kernels", "setting");
    const std::optional<CpuKernels> kernels = parse_cpu_kernels(setting);
    if (!kernels)
      throw EvidenceError(f.file() + ": numerics.cpu_kernels.setting: \"" + setting +
                          "\" is not a CPU kernel setting; allowed: portable, native");
    n.kernels = KernelRecord{*kernels, f.string(k, "numerics.cpu_kernels", "blas_core"),
                             f.string(k, "numerics.cpu_kernels", "aten_capability")};
  }
  if (block.contains("execution")) n.execution = f.object(block, "numerics", "execution");  // volatile
  return n;
}

// Merged shards' other environments: each lists runs of this file, none twice, sorted.
std::vector<RunEnvironment> run_environments_from_json(const Fields& f, const OrderedJson& j, const std::vector<RunRecord>& runs) {
  std::set<int64_t> indices;
  for (const RunRecord& r : runs) indices.insert(r.index);
  std::set<int64_t> listed;
  std::vector<RunEnvironment> out;
  const OrderedJson& list = f.array(j, "", "run_environments");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = index("run_environments", i);
    if (!list[i].is_object()) f.wrong(at, "an object", &list[i]);
    RunEnvironment re;
    re.environment = environment_from_json(f, f.object(list[i], at, "environment"), join(at, "environment"));
    const OrderedJson& ids = f.array(list[i], at, "runs");
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const std::string where = index(join(at, "runs"), k);
      const int64_t run = f.integer_value(ids[k], where);
      if (indices.count(run) == 0)
        throw EvidenceError(f.file() + ": " + where + ": " + std::to_string(run) + " is the index of no run in this file");
      if (!listed.insert(run).second)
        throw EvidenceError(f.file() + ": " + where + ": run " + std::to_string(run) + " is listed in two environments");
      re.runs.push_back(run);
    }
    std::sort(re.runs.begin(), re.runs.end());
    out.push_back(std::move(re));
  }
  return out;
}

LlamaCppRecord llama_cpp_from_json(const Fields& f, const OrderedJson& b) {
  const char* at = "llama_cpp";
  LlamaCppRecord l;
  l.library = f.string(b, at, "library");
  l.library_sha256 = f.string(b, at, "library_sha256");
  l.ggml_version = f.string(b, at, "ggml_version");
  l.ggml_commit = f.string(b, at, "ggml_commit");
  l.cpu_backend = f.string(b, at, "cpu_backend");
  l.system_info = f.string(b, at, "system_info");
  l.kv_type = f.string(b, at, "kv_type");
  l.flash_attn = f.string(b, at, "flash_attn");
  l.threads = f.small_integer(b, at, "threads");
  l.n_ubatch = f.small_integer(b, at, "n_ubatch");
  l.gguf_sha256 = f.string(b, at, "gguf_sha256");
  l.gguf_export_revision = f.small_integer(b, at, "gguf_export_revision");
  return l;
}

}  // namespace

Evidence evidence_from_json(const OrderedJson& j, const std::string& file) {
  check_schema(j, file);
  const Fields f(file);
  Evidence e;
  const OrderedJson& tool = f.object(j, "", "genrepro");
  e.genrepro = ToolInfo{f.string(tool, "genrepro", "version"), f.string(tool, "genrepro", "git_commit")};
  if (j.contains("created_utc")) e.created_utc = f.string(j, "", "created_utc");  // volatile
  e.environment = environment_from_json(f, f.object(j, "", "environment"), "environment");
  e.numerics = numerics_from_json(f, j);
  e.model = model_from_json(f, f.object(j, "", "model"), "model");
  const OrderedJson& experiments = f.array(j, "", "experiments");
  for (std::size_t i = 0; i < experiments.size(); ++i)
    e.experiments.push_back(experiment_from_json(f, experiments[i], index("experiments", i)));
  const OrderedJson& runs = f.array(j, "", "runs");
  e.runs.reserve(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) e.runs.push_back(run_from_json(f, runs[i], index("runs", i)));
  if (j.contains("run_environments")) e.run_environments = run_environments_from_json(f, j, e.runs);
  e.resumed = resume_from_json(j, file);
  if (j.contains("llama_cpp")) e.llama_cpp = llama_cpp_from_json(f, f.object(j, "", "llama_cpp"));
  check_evidence(e, file);
  check_consistency(e, file);
  return e;
}

}  // namespace genrepro
