#include "core/report_evidence.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"

namespace genrepro {

namespace {

constexpr const char* kEvidenceFix = "pass an evidence.json written by 'genrepro run' (docs/evidence-format.md)";

const char* json_type_name(const nlohmann::json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  return v.type_name();
}

// Reads fields of one JSON object and names the full path of any bad one, e.g.
// "runs[3].params.temperature".
class FieldReader {
 public:
  FieldReader(const std::string& file, const nlohmann::json& object, std::string path)
      : file_(file), object_(object), path_(std::move(path)) {}

  const nlohmann::json& require(const char* key, nlohmann::json::value_t type, const char* expected) const {
    const auto it = object_.find(key);
    if (it == object_.end()) fail(key, "is missing", expected);
    if (!matches(*it, type)) fail(key, std::string("is ") + json_type_name(*it), expected);
    return *it;
  }
  bool has(const char* key) const { return object_.contains(key) && !object_.at(key).is_null(); }

  std::string str(const char* key) const { return require(key, nlohmann::json::value_t::string, "a string").get<std::string>(); }
  double num(const char* key) const { return require(key, nlohmann::json::value_t::number_float, "a number").get<double>(); }
  int64_t integer(const char* key) const { return require(key, nlohmann::json::value_t::number_integer, "an integer").get<int64_t>(); }
  uint64_t unsigned_integer(const char* key) const {
    const auto& v = require(key, nlohmann::json::value_t::number_integer, "an integer >= 0");
    if (v.is_number_unsigned()) return v.get<uint64_t>();
    if (v.get<int64_t>() < 0) fail(key, "is " + v.dump(), "an integer >= 0");
    return static_cast<uint64_t>(v.get<int64_t>());
  }
  bool boolean(const char* key) const { return require(key, nlohmann::json::value_t::boolean, "true or false").get<bool>(); }
  const nlohmann::json& object(const char* key) const { return require(key, nlohmann::json::value_t::object, "an object"); }
  const nlohmann::json& array(const char* key) const { return require(key, nlohmann::json::value_t::array, "an array"); }

  std::string str_or(const char* key, const std::string& fallback) const { return has(key) ? str(key) : fallback; }
  double num_or(const char* key, double fallback) const { return has(key) ? num(key) : fallback; }
  int64_t integer_or(const char* key, int64_t fallback) const { return has(key) ? integer(key) : fallback; }
  bool boolean_or(const char* key, bool fallback) const { return has(key) ? boolean(key) : fallback; }

  std::vector<int64_t> ids(const char* key) const {
    std::vector<int64_t> out;
    const auto& a = array(key);
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_number_integer()) fail(std::string(key) + "[" + std::to_string(i) + "]", std::string("is ") + json_type_name(a[i]), "an integer token id");
      out.push_back(a[i].get<int64_t>());
    }
    return out;
  }

  std::string child(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  [[noreturn]] void fail(const std::string& key, const std::string& found, const std::string& expected) const {
    throw EvidenceError("evidence file '" + file_ + "': field '" + child(key) + "' " + found + ", expected " +
                        expected + "; " + kEvidenceFix);
  }

 private:
  static bool matches(const nlohmann::json& v, nlohmann::json::value_t type) {
    switch (type) {
      case nlohmann::json::value_t::number_float: return v.is_number();
      case nlohmann::json::value_t::number_integer: return v.is_number_integer();
      default: return v.type() == type;
    }
  }

  const std::string& file_;
  const nlohmann::json& object_;
  std::string path_;
};

DecodeMode parse_mode(const FieldReader& r) {
  const std::string m = r.str("mode");
  if (m == "greedy") return DecodeMode::greedy;
  if (m == "sample") return DecodeMode::sample;
  r.fail("mode", "is \"" + m + "\"", "\"greedy\" or \"sample\"");
}

StopReason parse_stop_reason(const FieldReader& r) {
  const std::string s = r.str("reason");
  if (s == "eos") return StopReason::eos;
  if (s == "max_new_tokens") return StopReason::max_new_tokens;
  if (s == "context_full") return StopReason::context_full;
  r.fail("reason", "is \"" + s + "\"", "\"eos\", \"max_new_tokens\" or \"context_full\"");
}

RunParams parse_params(const std::string& file, const nlohmann::json& j, const std::string& path) {
  const FieldReader r(file, j, path);
  RunParams p;
  p.sampling.mode = parse_mode(r);
  p.sampling.temperature = r.num("temperature");
  p.sampling.top_k = r.integer("top_k");
  p.sampling.top_p = r.num("top_p");
  p.sampling.seed = r.unsigned_integer("seed");
  p.sampling.sampler_order.clear();
  const auto& order = r.array("sampler_order");
  for (size_t i = 0; i < order.size(); ++i) {
    if (!order[i].is_string()) r.fail("sampler_order[" + std::to_string(i) + "]", std::string("is ") + json_type_name(order[i]), "a stage name");
    p.sampling.sampler_order.push_back(order[i].get<std::string>());
  }
  p.sampling.top_p_rule = r.str_or("top_p_rule", p.sampling.top_p_rule);
  p.sampling.rng = r.str_or("rng", p.sampling.rng);
  p.max_new_tokens = r.integer("max_new_tokens");
  p.stop_at_eos = r.boolean_or("stop_at_eos", p.stop_at_eos);
  p.use_cache = r.boolean_or("use_cache", p.use_cache);
  p.top_candidates = r.integer_or("top_candidates", p.top_candidates);
  return p;
}

StepRecord parse_step(const std::string& file, const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw EvidenceError("evidence file '" + file + "': field '" + path + "' is " + json_type_name(j) + ", expected a step object; " + kEvidenceFix);
  const FieldReader r(file, j, path);
  StepRecord s;
  s.step = r.integer("step");
  if (r.has("token_id")) s.token_id = r.integer("token_id");
  s.token_text = r.str_or("token_text", "");
  s.prob = r.num("prob");
  s.prob_t1 = r.num("prob_t1");
  s.kept = r.integer("kept");
  const auto& top = r.array("top");
  for (size_t i = 0; i < top.size(); ++i) {
    const std::string cpath = r.child("top[" + std::to_string(i) + "]");
    if (!top[i].is_object()) throw EvidenceError("evidence file '" + file + "': field '" + cpath + "' is " + json_type_name(top[i]) + ", expected a candidate object; " + kEvidenceFix);
    const FieldReader c(file, top[i], cpath);
    Candidate cand;
    cand.id = c.integer("id");
    cand.text = c.str("text");
    cand.prob = c.num("prob");
    cand.prob_scaled = c.num("prob_scaled");
    s.top.push_back(std::move(cand));
  }
  s.rest_mass = r.num("rest_mass");
  s.margin = r.num_or("margin", 0);
  s.logit_margin = r.num_or("logit_margin", 0);
  s.entropy = r.num_or("entropy", 0);
  return s;
}

ReportRun parse_run(const std::string& file, const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) throw EvidenceError("evidence file '" + file + "': field '" + path + "' is " + json_type_name(j) + ", expected a run object; " + kEvidenceFix);
  const FieldReader r(file, j, path);
  ReportRun run;
  run.id = r.str_or("id", path);
  run.experiment = r.str_or("experiment", "");
  run.index = r.integer_or("index", 0);
  run.prompt_index = r.integer_or("prompt_index", 0);
  run.prompt = r.str("prompt");
  run.params = parse_params(file, r.object("params"), r.child("params"));
  if (r.has("prompt_ids")) run.result.prompt_ids = r.ids("prompt_ids");
  run.result.output_ids = r.ids("output_ids");
  run.text = r.str("text");
  run.continuation = r.str_or("continuation", "");
  const FieldReader stop(file, r.object("stop"), r.child("stop"));
  run.result.stop_reason = parse_stop_reason(stop);
  run.result.stop_step = stop.integer("step");
  const auto& steps = r.array("steps");
  for (size_t i = 0; i < steps.size(); ++i) {
    run.result.steps.push_back(parse_step(file, steps[i], r.child("steps[" + std::to_string(i) + "]")));
  }
  return run;
}

}  // namespace

ReportDocument parse_report_evidence(const nlohmann::json& evidence, const std::string& name) {
  if (!evidence.is_object()) {
    throw EvidenceError("evidence file '" + name + "' holds " + std::string(json_type_name(evidence)) +
                        ", expected an evidence object with \"schema\": \"" + kReportEvidenceSchema + "\"; " + kEvidenceFix);
  }
  const FieldReader r(name, evidence, "");
  const std::string schema = r.str("schema");
  if (schema != kReportEvidenceSchema) {
    r.fail("schema", "is \"" + schema + "\"", std::string("\"") + kReportEvidenceSchema + "\"");
  }
  ReportDocument doc;
  doc.name = name;
  doc.evidence = evidence;
  const auto& runs = r.array("runs");
  for (size_t i = 0; i < runs.size(); ++i) {
    doc.runs.push_back(parse_run(name, runs[i], "runs[" + std::to_string(i) + "]"));
  }
  return doc;
}

ReportDocument read_report_evidence(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw EvidenceError("evidence file '" + path + "' is a directory; " + kEvidenceFix);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw EvidenceError("cannot open evidence file '" + path + "': " + std::strerror(errno) + "; " + kEvidenceFix);
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  nlohmann::json evidence;
  try {
    evidence = nlohmann::json::parse(bytes.str());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message reads "[json.exception.parse_error.101] parse error at line 1, column 2: ...";
    // keep the part after the id so the line names the place, and keep it to one line.
    std::string what = e.what();
    const auto cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    for (char& c : what) if (c == '\n' || c == '\r') c = ' ';
    throw EvidenceError("evidence file '" + path + "' is not JSON (" + what + "); " + kEvidenceFix);
  }
  // Messages name the path the user gave; the report shows only the file name.
  ReportDocument doc = parse_report_evidence(evidence, path);
  doc.name = name;
  return doc;
}

}  // namespace genrepro
