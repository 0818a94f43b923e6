#include "params/experiment_file.hpp"

#include "params/param_table.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/joined.hpp"
#include "util/json_text.hpp"
#include "params/framework_params.hpp"
#include "params/sampling_params.hpp"
#include "util/sha256.hpp"
#include "util/utf8.hpp"

namespace genrepro {

namespace {

using nlohmann::json;

// A grid that expands past this many runs is almost certainly a typo (a list where a scalar
// was meant); it would also take days. Larger studies split into several files or shards.
constexpr size_t kMaxNameLength = 64;

uint64_t saturating_product(uint64_t a, uint64_t b) {
  return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}
constexpr size_t kShownValueChars = 60;  // longer values are cut in messages, keeping them one line
constexpr size_t kIdHashHexDigits = 8;
// The most seeds one range may name: as many as one command may run at all (--max-runs' ceiling).
constexpr uint64_t kMaxSeedRangeCount = kMaxRunsCeiling;
// A prompts file (lines of text, or JSON lines) may be a dataset: far more than an experiment file.
constexpr uint64_t kMaxPromptsFileBytes = uint64_t(16) << 20;

// Keys that may be written at the top level as defaults for every run entry (the table's
// inherited rows), in table order.
const std::vector<std::string>& inherited_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const ParamRow& row : param_table())
      if (row.inherited) k.push_back(row.key);
    return k;
  }();
  return keys;
}
const std::vector<std::string>& top_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"name", "description", "prompts", "prompts_file"};
    k.insert(k.end(), inherited_keys().begin(), inherited_keys().end());
    k.insert(k.end(), {"runs", "record"});
    return k;
  }();
  return keys;
}
const std::vector<std::string> kRecordKeys = {"top_candidates"};
// The key that picks a framework's controls (params/framework_params.hpp), nested outside every
// other axis, and the key whose N copies of each run nest inside every other axis.
const std::string kFrameworkKey = "framework";
const std::string kReplicasKey = "replicas";

// The key an experiment entry writes for a row: the table's, but "replicas" for the copy index.
std::string entry_key(const ParamRow& row) { return row.kind == ParamKind::copy ? kReplicasKey : row.key; }

// The article's keys of a run entry (the table's rows every framework has, but the record's
// top_candidates and the framework itself), in grid order: the first varies slowest.
const std::vector<std::string>& article_run_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const ParamRow& row : param_table()) {
      const std::string key = row.key;
      if (row.is_control() || key == kFrameworkKey || key == "top_candidates") continue;
      k.push_back(entry_key(row));
    }
    return k;
  }();
  return keys;
}

bool contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

std::vector<std::string> control_key_names() {
  std::vector<std::string> names;
  for (const ParamRow* k : control_keys()) names.push_back(k->key);
  return names;
}

// Every key a run entry may hold: the article's, framework, the frameworks' controls.
const std::vector<std::string>& all_run_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = article_run_keys();
    k.push_back(kFrameworkKey);
    for (const std::string& c : control_key_names()) k.push_back(c);
    return k;
  }();
  return keys;
}

// The row behind an entry's key ("replicas" is the copy index's).
const ParamRow* row_of(const std::string& key) { return find_param(key == kReplicasKey ? "replica" : key); }

bool is_sampling_only(const std::string& key) {
  const ParamRow* row = row_of(key);
  return row && row->sampling_only;
}

std::string shown(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > kShownValueChars) s = s.substr(0, kShownValueChars) + "...";
  return s;
}

std::string child(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

std::string element(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

// What each run key accepts: its row's words.
std::string allowed_for(const std::string& key) {
  const ParamRow* row = row_of(key);
  return row ? row->allowed() : "?";
}

// A checked name's value; its problem, described at `where`, is a SpecError.
template <class T>
T value_or_throw(Checked<T> checked, const std::string& where) {
  if (checked.problem) throw SpecError(describe_problem(*checked.problem, where));
  return std::move(*checked.value);
}

class SpecReader {
 public:
  explicit SpecReader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw SpecError(path_ + ": " + (where.empty() ? "" : where + ": ") + what);
  }
  [[noreturn]] void fail_value(const std::string& where, const json& value, const std::string& allowed) const {
    throw SpecError(path_ + ": " + describe_problem({"", shown(value), allowed}, where));
  }

  enum class Level { top, run, record };

  void check_keys(const json& obj, const std::string& where, Level level) const {
    const std::vector<std::string>& known = level == Level::top ? top_keys() : level == Level::run ? article_run_keys() : kRecordKeys;
    const std::vector<std::string>& accepted = level == Level::run ? all_run_keys() : known;
    for (const auto& item : obj.items()) {
      if (contains(accepted, item.key())) continue;
      // An entry that names a framework lists its keys too; one that does not, the article's (as ever).
      std::string listed = joined(known, ", ");
      if (level == Level::run && obj.contains(kFrameworkKey)) listed = joined(accepted, ", ");
      fail(child(where, item.key()), "unknown key" + misplaced_hint(item.key(), level, accepted) + " (known here: " +
                                         listed + ")");
    }
  }

  // A key that is valid elsewhere is named with its place; otherwise the nearest key here.
  static std::string misplaced_hint(const std::string& key, Level level, const std::vector<std::string>& known) {
    if (level == Level::top && contains(article_run_keys(), key)) return "; " + key + " belongs in each entry of runs";
    if (level != Level::record && key == "top_candidates") return "; top_candidates belongs in record";
    if (level == Level::run && contains(top_keys(), key)) return "; " + key + " is a top-level key";
    const std::string near = nearest_key(key, known);
    return near.empty() ? "" : "; did you mean \"" + near + "\"?";
  }

  // Checks one scalar value of a run key (a grid element or a plain value) at `where`, for each
  // framework the entry may run under.
  void check_run_value(const std::string& key, const json& v, const std::string& where,
                       const std::vector<Framework>& frameworks = {Framework::article}) const {
    for (Framework f : frameworks) {
      RunParams trial;
      trial.sampling.mode = DecodeMode::sample;
      resolve_framework(trial.sampling, f);
      apply_checked_type(key, v, where, trial);
      for (const ParamProblem& p : check_run_params(trial)) {
        if (p.field == key) throw SpecError(path_ + ": " + describe_problem(p, where));
      }
    }
  }

  // Type-checks `v` for `key` and stores it in `p`, by its row's reader (a name as its enum: an
  // unknown name is reported in check_top_p_rule's, check_rng's or check_sampler_order's words).
  void apply_checked_type(const std::string& key, const json& v, const std::string& where, RunParams& p) const {
    const ParamRow* row = row_of(key);
    if (!row) fail(where, "unknown key");
    // An experiment names at least one stage (evidence may record an empty chain: a valid plan).
    if (row->kind == ParamKind::stages && v.is_array() && v.empty()) fail_value(where, v, row->allowed());
    if (const std::optional<ValueProblem> problem = row->read(p, v)) fail_problem(where, *problem, *row);
  }

  [[noreturn]] void fail_problem(const std::string& where, const ValueProblem& problem, const ParamRow& row) const {
    const std::string allowed = problem.allowed.empty() ? row.allowed() : problem.allowed;
    if (problem.shown) throw SpecError(path_ + ": " + describe_problem({"", *problem.shown, allowed}, where + problem.at));
    fail_value(where + problem.at, problem.value, allowed);
  }

  // A seed range {"from": F, "count": N}: the list [F, F+1, ..., F+N-1], exactly as if it had been
  // written out, so the runs and their ids do not depend on how the seeds were written. Checked
  // whole before it is made: each key, a count of at most kMaxSeedRangeCount, and a last seed below
  // 2^64.
  json seed_range_list(const json& v, const std::string& where) const {
    const std::string example = "e.g. \"seed\": {\"from\": 1, \"count\": 20} for seeds 1 to 20";
    for (const auto& item : v.items())
      if (item.key() != "from" && item.key() != "count")
        fail(child(where, item.key()), "unknown key; a seed range has \"from\" and \"count\", " + example);
    if (!v.contains("from") || !v.contains("count"))
      fail(where, std::string("a seed range needs \"") + (v.contains("from") ? "count" : "from") + "\", " + example);
    const json& from = v["from"];
    const json& count = v["count"];
    check_run_value("seed", from, child(where, "from"));
    if (!from.is_number_unsigned()) fail_value(child(where, "from"), from, std::string(seed_allowed()) + ", as a JSON number");
    const std::string count_allowed = "an integer from 1 to " + std::to_string(kMaxSeedRangeCount) +
                                      " (the seeds from, from+1, ..., from+count-1)";
    if (!count.is_number_unsigned() || count.get<uint64_t>() < 1 || count.get<uint64_t>() > kMaxSeedRangeCount)
      fail_value(child(where, "count"), count, count_allowed);
    const uint64_t first = from.get<uint64_t>(), n = count.get<uint64_t>();
    if (n - 1 > UINT64_MAX - first)
      fail_value(child(where, "count"), count, "at most 2^64 - from, so that the last seed stays below 2^64 (" + count_allowed + ")");
    json list = json::array();
    for (uint64_t i = 0; i < n; ++i) list.push_back(first + i);
    return list;
  }

  // A run key's values: a list expands into the grid, anything else is one value. For
  // sampler_order (itself a list of names) the grid is a list of lists. A seed may also be a range.
  std::vector<std::pair<json, std::string>> axis_values(const std::string& key, const json& v, const std::string& where,
                                                        const std::vector<Framework>& frameworks = {Framework::article}) const {
    if (key == "seed" && v.is_object()) return axis_values(key, seed_range_list(v, where), where, frameworks);
    // A list-valued control (suppress_tokens, bad_words_ids, ...) is one value per entry, never a grid.
    const ParamRow* control = find_control_key(key);
    const bool is_grid = control && control->list_valued() ? false
                         : key == "sampler_order" ? (v.is_array() && !v.empty() && v[0].is_array())
                                                  : v.is_array();
    std::vector<std::pair<json, std::string>> values;
    if (!is_grid) {
      check_run_value(key, v, where, frameworks);
      values.emplace_back(v, where);
      return values;
    }
    if (const ParamRow* row = find_param(key); row && row->single)
      fail_value(where, v, allowed_for(key) + ", one value, not a list: " + row->single);
    if (v.empty()) fail(where, "empty list; give at least one value (" + allowed_for(key) + ")");
    // Repeats are found in n log n: a 1 MiB file can hold a list of 200,000 values.
    std::map<json, size_t> first_index;
    for (size_t i = 0; i < v.size(); ++i) {
      const std::string at = element(where, i);
      if (key != "sampler_order" && v[i].is_array())
        fail_value(at, v[i], allowed_for(key) + " (lists do not nest)");
      check_run_value(key, v[i], at, frameworks);
      const auto [it, fresh] = first_index.emplace(v[i], i);
      if (!fresh) fail(at, shown(v[i]) + " repeats " + element(where, it->second) + "; list each value once");
      values.emplace_back(v[i], at);
    }
    return values;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string check_name(const SpecReader& r, const json& root) {
  if (!root.contains("name")) r.fail("name", "missing; give the experiment a short name, e.g. \"name\": \"temperature\"");
  const json& v = root["name"];
  const std::string allowed = "a string of 1 to " + std::to_string(kMaxNameLength) +
                              " letters, digits, '_', '-' or '.', starting with a letter or digit";
  if (!v.is_string()) r.fail_value("name", v, allowed);
  const std::string name = v.get<std::string>();
  const auto ok_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; };
  if (name.empty() || name.size() > kMaxNameLength || !std::isalnum(static_cast<unsigned char>(name[0])) ||
      !std::all_of(name.begin(), name.end(), ok_char))
    r.fail_value("name", v, allowed);
  return name;
}

// The lines of a prompts file as prompts: text lines (every line that is not blank, without its
// line ending), or for a .jsonl file JSON lines whose "text" field is the prompt. `file_label`
// names the file in messages.
std::vector<std::string> prompts_of_file(const SpecReader& r, const std::string& text, const std::string& file_label, bool json_lines) {
  std::vector<std::string> prompts;
  std::map<std::string, size_t> first_line;
  size_t line_no = 0;
  for (size_t from = 0; from <= text.size();) {
    const size_t end = std::min(text.find('\n', from), text.size());
    std::string line = text.substr(from, end - from);
    from = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) {
      if (end == text.size()) break;
      continue;
    }
    const std::string where = file_label + ":" + std::to_string(line_no);
    std::string prompt = line;
    if (json_lines) {
      JsonParseOutcome parsed = parse_json_text(line);
      const std::string allowed = "a JSON object with a non-empty string \"text\", e.g. {\"text\": \"the river bank was\"}";
      if (!parsed.ok() || !parsed.value.is_object() || !parsed.value.contains("text") || !parsed.value["text"].is_string() ||
          parsed.value["text"].get<std::string>().empty())
        throw SpecError(r.path() + ": prompts_file " + where + " = " + shown(json(line)) + " is not allowed; allowed: " + allowed);
      prompt = parsed.value["text"].get<std::string>();
    }
    const auto [it, fresh] = first_line.emplace(prompt, line_no);
    if (!fresh)
      throw SpecError(r.path() + ": prompts_file " + where + ": repeats the prompt of line " + std::to_string(it->second) +
                      "; list each prompt once");
    prompts.push_back(std::move(prompt));
    if (end == text.size()) break;
  }
  if (prompts.empty())
    throw SpecError(r.path() + ": prompts_file " + file_label + ": holds no prompt; give one prompt per line" +
                    (json_lines ? std::string(" as {\"text\": ...}") : std::string()));
  return prompts;
}

// "prompts_file": the prompts read from a file beside the experiment file, put into `root` as
// "prompts", and the string replaced by the record of what was read ({"path", "sha256", "bytes"}),
// so the spec the evidence records is whole (merge, bless and the reader re-expand it where the
// file is not) and says which bytes the prompts came from, as the model's files are checksummed.
// A recorded spec (an object, with "prompts" beside it) is taken as it is.
void resolve_prompts_file(const SpecReader& r, json& root) {
  if (!root.contains("prompts_file")) return;
  const json& v = root["prompts_file"];
  const std::string allowed = "a path, relative to the experiment file, of a text file with one prompt per line, or of "
                              "JSON lines (.jsonl) with a \"text\" field";
  if (v.is_object()) {
    for (const char* key : {"path", "sha256", "bytes"})
      if (!v.contains(key)) r.fail_value("prompts_file", v, allowed + " (evidence records it as {\"path\", \"sha256\", \"bytes\"} beside the prompts)");
    if (!root.contains("prompts"))
      r.fail("prompts_file", "a recorded prompts file ({\"path\", \"sha256\", \"bytes\"}) comes with the prompts it held; give its path as a string");
    return;
  }
  if (!v.is_string() || v.get<std::string>().empty()) r.fail_value("prompts_file", v, allowed);
  if (root.contains("prompts"))
    r.fail("prompts_file", "given together with prompts; give one of them (prompts: the list itself, prompts_file: a file of them)");
  const std::string given = v.get<std::string>();
  namespace fs = std::filesystem;
  const fs::path file = fs::path(given).is_absolute() || r.path() == kStdinPath ? fs::path(given) : fs::path(r.path()).parent_path() / given;
  const BoundedRead read = read_bounded(file.string(), kMaxPromptsFileBytes, Expect::text);
  if (!read.ok())
    throw SpecError(r.path() + ": prompts_file = " + shown(v) + " (" + file.string() + "): " + read.problem + "; allowed: " + allowed);
  const std::size_t bad = find_invalid_utf8(read.text);
  if (bad != std::string::npos)
    throw SpecError(r.path() + ": prompts_file " + file.string() + ": byte " + std::to_string(bad) +
                    " is not UTF-8; allowed: UTF-8 text (prompts are text, as in the experiment file)");
  const std::string ext = file.extension().string();
  const std::vector<std::string> prompts = prompts_of_file(r, read.text, file.string(), ext == ".jsonl" || ext == ".ndjson");
  root["prompts"] = prompts;
  root["prompts_file"] = {{"path", given}, {"sha256", sha256_hex(read.text)}, {"bytes", read.text.size()}};
}

std::vector<std::string> check_prompts(const SpecReader& r, const json& root) {
  if (!root.contains("prompts"))
    r.fail("prompts", "missing; give a list of at least one prompt, e.g. \"prompts\": [\"the river bank was\"], or a file of "
                      "them, \"prompts_file\": \"prompts.txt\"");
  const json& v = root["prompts"];
  const std::string allowed = "a non-empty list of non-empty strings";
  if (!v.is_array()) r.fail_value("prompts", v, allowed);
  if (v.empty()) r.fail("prompts", "empty list; give at least one prompt, e.g. [\"the river bank was\"]");
  std::vector<std::string> prompts;
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = element("prompts", i);
    if (!v[i].is_string() || v[i].get<std::string>().empty()) r.fail_value(at, v[i], "a non-empty string");
    for (size_t j = 0; j < i; ++j) {
      if (prompts[j] == v[i].get<std::string>()) r.fail(at, "repeats prompts[" + std::to_string(j) + "]; list each prompt once");
    }
    prompts.push_back(v[i].get<std::string>());
  }
  return prompts;
}

int64_t check_record(const SpecReader& r, const json& root) {
  RunParams defaults;
  if (!root.contains("record")) return defaults.top_candidates;
  const json& rec = root["record"];
  if (!rec.is_object()) r.fail_value("record", rec, "an object, e.g. {\"top_candidates\": 5}");
  r.check_keys(rec, "record", SpecReader::Level::record);
  if (!rec.contains("top_candidates")) return defaults.top_candidates;
  r.check_run_value("top_candidates", rec["top_candidates"], "record.top_candidates");
  return rec["top_candidates"].get<int64_t>();
}

// Problems that only show in the combination (a stage left out of sampler_order while its
// parameter is set) are reported at the run entry, with check_run_params' words.
void check_combination(const SpecReader& r, const RunParams& p, const std::string& where) {
  for (const ParamProblem& problem : check_run_params(p)) {
    throw SpecError(r.path() + ": " + describe_problem(problem, child(where, problem.field)));
  }
}

// Two runs of one experiment with the same id would be indistinguishable in the evidence.
void claim_id(const SpecReader& r, std::map<std::string, std::string>& seen_ids, const ExpandedRun& run) {
  const auto [it, inserted] = seen_ids.emplace(run.id, run.source);
  if (!inserted)
    r.fail(run.source, "expands to a run that " + it->second + " already gives (id " + run.id + "); list each run once");
}

struct RunEntry {
  std::string source;  // "runs[i]"
  DecodeMode mode = DecodeMode::greedy;
  std::vector<std::string> keys;                                       // grid axes, in the table's order
  std::vector<std::vector<std::pair<json, std::string>>> axes;         // values (and where) per axis
};

// "replicas": N as the grid axis "replica" = 0 .. N-1, innermost (it varies fastest), so the copies
// of a run are neighbours in the expansion and in a batch.
std::vector<std::pair<json, std::string>> replicas_axis(const SpecReader& r, const json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > kMaxReplicas ||
      (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(kMaxReplicas)))
    r.fail_value(where, v, allowed_for(kReplicasKey));
  std::vector<std::pair<json, std::string>> copies;
  for (int64_t k = 0; k < v.get<int64_t>(); ++k) copies.emplace_back(json(k), where);
  return copies;
}

RunEntry check_run_entry(const SpecReader& r, const json& entry, const std::string& where, const json& root) {
  RunEntry out;
  out.source = where;
  if (!entry.is_object()) r.fail_value(where, entry, "an object such as {\"mode\": \"greedy\"}");
  r.check_keys(entry, where, SpecReader::Level::run);
  if (!entry.contains("mode")) r.fail(child(where, "mode"), "missing; give \"greedy\" or \"sample\"");
  const json& mode = entry["mode"];
  if (mode.is_array())
    r.fail_value(child(where, "mode"), mode, "\"greedy\" or \"sample\" (one mode per run entry; write two entries)");
  if (mode == "greedy") {
    out.mode = DecodeMode::greedy;
  } else if (mode == "sample") {
    out.mode = DecodeMode::sample;
  } else {
    r.fail_value(child(where, "mode"), mode, allowed_for("mode"));
  }
  // The frameworks this entry runs under (a grid of them, or article), read first: every other
  // key is checked against each.
  std::vector<Framework> frameworks = {Framework::article};
  if (entry.contains(kFrameworkKey)) {
    const std::string at = child(where, kFrameworkKey);
    out.keys.push_back(kFrameworkKey);
    out.axes.push_back(r.axis_values(kFrameworkKey, entry[kFrameworkKey], at));
    frameworks.clear();
    for (const auto& value : out.axes.back()) frameworks.push_back(*parse_framework(value.first.get<std::string>()));
  }
  for (const std::string& key : all_run_keys()) {
    if (key == "mode" || key == kReplicasKey || key == kFrameworkKey) continue;
    std::string at = child(where, key);
    const json* value = nullptr;
    if (entry.contains(key)) {
      value = &entry[key];
      if (out.mode == DecodeMode::greedy && is_sampling_only(key))
        r.fail(at, "has no effect with mode \"greedy\" (it always picks the most probable token); remove it, or use mode \"sample\"");
      if (const ParamRow* control = find_control_key(key)) {
        for (Framework f : frameworks) {
          if (framework_has(f, *control)) continue;
          r.fail(at, std::string("is ") + owners_of(*control) + " control, and this entry's framework is " + to_string(f) +
                         (entry.contains(kFrameworkKey) ? "; give it in an entry of its framework"
                                                        : "; add \"framework\": \"" +
                                                              std::string(control->has(Framework::hf) ? "hf" : "llama.cpp") +
                                                              "\" to the entry"));
        }
      }
    } else if (contains(inherited_keys(), key) && root.contains(key)) {
      value = &root[key];
      at = key;  // inherited: errors point at the top-level key
    }
    if (value == nullptr) continue;
    out.keys.push_back(key);
    out.axes.push_back(r.axis_values(key, *value, at, frameworks));
  }
  if (entry.contains(kReplicasKey)) {
    out.keys.push_back("replica");
    out.axes.push_back(replicas_axis(r, entry[kReplicasKey], child(where, kReplicasKey)));
  }
  if (out.mode == DecodeMode::sample && !entry.contains("seed")) {
    bool all_first_prediction = false;
    const auto it = std::find(out.keys.begin(), out.keys.end(), "max_new_tokens");
    if (it != out.keys.end()) {
      const auto& values = out.axes[static_cast<size_t>(it - out.keys.begin())];
      all_first_prediction = std::all_of(values.begin(), values.end(), [](const auto& v) { return v.first == 0; });
    }
    if (!all_first_prediction)
      r.fail(child(where, "seed"), std::string("missing; mode \"sample\" needs a seed (") + seed_allowed() +
                                       "), e.g. \"seed\": 42; only first-prediction runs (max_new_tokens 0) may leave it out");
  }
  return out;
}

}  // namespace

std::string ExpandedRun::path_of(const std::string& key) const {
  const auto it = value_paths.find(key);
  return it != value_paths.end() ? it->second : child(source, key);
}

std::string nearest_key(const std::string& key, const std::vector<std::string>& known) {
  // Optimal string alignment distance: insertions, deletions, substitutions, adjacent swaps.
  const auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      for (size_t j = 1; j <= b.size(); ++j) {
        const size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                    std::tolower(static_cast<unsigned char>(b[j - 1]))
                                ? 0
                                : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
    return d[a.size()][b.size()];
  };
  // Keys are short; a typo is at most a third of the key (and at least 2 edits are forgiven).
  if (key.size() > 4 * kMaxNameLength) return {};
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const auto& candidate : known) {
    const size_t dist = distance(key, candidate);
    if (dist < best_distance) {
      best = candidate;
      best_distance = dist;
    }
  }
  return best;
}

nlohmann::ordered_json params_to_json(const RunParams& p) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const ParamRow& row : param_table())
    if (written_in_evidence(row, p)) j[row.key] = row.get(p);
  // Where ids came from: written only when a text was given, so a run given ids writes what it
  // always wrote.
  const FrameworkControls& c = p.sampling.controls;
  if (p.sampling.framework != Framework::article && !c.texts.empty()) j["control_texts"] = control_texts_to_json(c.texts);
  return j;
}

nlohmann::ordered_json params_as_written_json(const RunParams& p) {
  nlohmann::ordered_json j = params_to_json(p);
  const FrameworkControls& c = p.sampling.controls;
  if (c.texts.empty()) return j;
  j.erase("control_texts");
  for (const ControlText& t : c.texts) j[t.control] = control_as_written(c, t.control);
  return j;
}

namespace {

// A key the run's own params would not write is a parameter the engine never applied (another
// framework's control, or one this version does not know): read silently, it would let two runs
// that differ in it compare as equal.
void refuse_keys_the_run_never_writes(const nlohmann::json& j, const RunParams& p, const std::string& where) {
  const nlohmann::ordered_json written = params_to_json(p);
  for (const auto& item : j.items()) {
    const std::string& key = item.key();
    if (written.contains(key)) continue;
    const ParamRow* row = find_param(key);
    if (row && row->is_control())
      throw SpecError(where + "." + key + ": is " + owners_of(*row) + " control, which a run of framework " +
                      to_string(p.sampling.framework) + " never writes (give it only in runs of its framework)");
    std::vector<std::string> known;
    for (const auto& w : written.items()) known.push_back(w.key());
    throw SpecError(where + "." + key + ": unknown key" + (row ? " for this run" : "") + " (this run's params hold: " +
                    joined(known, ", ") + ")");
  }
}

}  // namespace

RunParams params_from_json(const nlohmann::json& j, const std::string& where) {
  const auto need = [&](const ParamRow& row) -> const json& {
    if (!j.is_object() || !j.contains(row.key)) throw SpecError(where + "." + row.key + ": missing");
    const json& v = j[row.key];
    if (!has_evidence_type(row.kind, v))
      throw SpecError(where + "." + row.key + " = " + shown(v) + " is not allowed; allowed: " + evidence_type_words(row.kind));
    return v;
  };
  const auto read = [&](const ParamRow& row, RunParams& p, const json& v) {
    if (const std::optional<ValueProblem> problem = row.read(p, v))
      throw SpecError(where + "." + row.key + problem->at + " = " + (problem->shown ? *problem->shown : shown(problem->value)) +
                      " is not allowed; allowed: " + (problem->allowed.empty() ? row.allowed() : problem->allowed));
  };
  RunParams p;
  SamplingParams& s = p.sampling;
  const json& mode = need(param("mode"));
  // The framework first: it says which names the order, rule and rng may hold, and which controls follow.
  if (j.is_object() && j.contains("framework")) {
    const json& f = j["framework"];
    if (!f.is_string()) throw SpecError(where + ".framework = " + shown(f) + " is not allowed; allowed: a string");
    s.framework = value_or_throw(check_framework(f.get<std::string>()), where + ".framework");
    if (s.framework == Framework::article)
      throw SpecError(where + ".framework = \"article\" is not allowed; allowed: \"hf\" or \"llama.cpp\" (an article run writes no framework)");
  }
  read(param("mode"), p, mode);
  // Every key every run writes, in the table's order (the copy index only where written).
  for (const ParamRow& row : param_table()) {
    const std::string key = row.key;
    if (row.is_control() || key == "mode" || key == "framework" || row.kind == ParamKind::copy) continue;
    if (key == "engine" && !(j.is_object() && j.contains(key))) continue;  // genrepro's own: not written
    const json& v = need(row);
    if (row.kind == ParamKind::stages)
      for (const json& stage : v)
        if (!stage.is_string()) throw SpecError(where + "." + key + ": " + shown(stage) + " is not a stage name");
    read(row, p, v);
  }
  if (j.contains("replica")) {
    const json& v = j["replica"];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() >= kMaxReplicas ||
        (v.is_number_unsigned() && v.get<uint64_t>() >= uint64_t(kMaxReplicas)))
      throw SpecError(where + ".replica = " + shown(v) + " is not allowed; allowed: an integer from 1 to " +
                      std::to_string(kMaxReplicas - 1) + " (copy 0 of a run writes no replica)");
    p.replica = v.get<int64_t>();
  }
  if (s.framework != Framework::article) {
    for (const ParamRow* k : control_keys()) {
      if (!framework_has(s.framework, *k)) continue;
      if (!j.contains(k->key)) throw SpecError(where + "." + k->key + ": missing");
      if (const auto problem = read_control(s.controls, k->key, j[k->key]))
        throw SpecError(where + "." + k->key + problem->at + " = " + shown(problem->value) + " is not allowed; allowed: " +
                        problem->allowed);
      if (!s.controls.texts.empty()) {
        const ControlText& t = s.controls.texts.front();
        throw SpecError(where + "." + k->key + "[" + std::to_string(t.entry) + "] = " + shown(t.text) +
                        " is not allowed; allowed: token ids (evidence records the ids a text became, and the text in control_texts)");
      }
    }
    // Evidence holds the ids in the lists; control_texts says which entries were given as text.
    // Without it, no entry was.
    s.controls.texts.clear();
    if (j.contains("control_texts")) {
      if (const auto problem = read_control_texts(s.controls.texts, j["control_texts"]))
        throw SpecError(where + ".control_texts" + *problem);
      if (s.controls.texts.empty())
        throw SpecError(where + ".control_texts = [] is not allowed; allowed: a non-empty list (a run given no text writes none)");
      if (const auto problem = control_texts_problem(s.controls, s.framework))
        throw SpecError(where + ".control_texts[" + std::to_string(problem->index) + "]: " + problem->problem);
    }
  } else if (j.is_object() && j.contains("control_texts")) {
    throw SpecError(where + ".control_texts: is not allowed in an article run (only the frameworks' list controls take texts)");
  }
  refuse_keys_the_run_never_writes(j, p, where);
  return p;
}

std::string run_id(const std::string& experiment, int64_t prompt_index, const std::string& prompt, const RunParams& p) {
  // The summary: whose controls first ("hf-", "llamacpp-"), the mode, then each row's part in the
  // table's order ("-t0.7-k40-p0.9-s42-r3").
  std::string summary = param("framework").id_part(p) + to_string(p.sampling.mode);
  for (const ParamRow& row : param_table())
    if (row.id_part && std::string(row.key) != "framework") summary += row.id_part(p);
  // nlohmann's json keeps object keys sorted and dumps doubles in their shortest round-trip
  // form, so this text is canonical: the same parameters always hash the same.
  // The params as the experiment gave them: a control's text, like the prompt's, is hashed as
  // text, so the id is known before any tokenizer is (merge, bless and the reader re-expand specs).
  // The engine is left out: the same run through two engines keeps one id, so diff pairs them.
  nlohmann::json params = params_as_written_json(p);
  params.erase("engine");
  const nlohmann::json canonical = {{"params", params}, {"prompt", prompt}};
  const std::string hash = sha256_hex(canonical.dump()).substr(0, kIdHashHexDigits);
  return experiment + "/p" + std::to_string(prompt_index) + "/" + summary + "-" + hash;
}

ExperimentSpec parse_experiment(const std::string& text, const std::string& path, RunBudget budget) {
  const SpecReader r(path);
  JsonParseOutcome parsed = parse_json_text(text);
  if (!parsed.ok()) throw SpecError(path + ": " + parsed.problem);
  if (!parsed.value.is_object()) r.fail_value("(top level)", parsed.value, "an object with name, prompts and runs (see docs/experiments.md)");
  r.check_keys(parsed.value, "", SpecReader::Level::top);
  resolve_prompts_file(r, parsed.value);
  const json& root = parsed.value;

  ExperimentSpec spec;
  spec.path = path;
  spec.sha256 = sha256_hex(text);
  spec.name = check_name(r, root);
  if (root.contains("description")) {
    if (!root["description"].is_string()) r.fail_value("description", root["description"], "a string");
    spec.description = root["description"].get<std::string>();
  }
  spec.prompts = check_prompts(r, root);
  const int64_t top_candidates = check_record(r, root);
  for (const std::string& key : inherited_keys()) {
    if (root.contains(key)) r.axis_values(key, root[key], key);  // checked even if every run overrides it
  }
  if (!root.contains("runs")) r.fail("runs", "missing; give a list of run entries, e.g. \"runs\": [{\"mode\": \"greedy\"}]");
  const json& runs = root["runs"];
  if (!runs.is_array()) r.fail_value("runs", runs, "a non-empty list of run entries");
  if (runs.empty()) r.fail("runs", "empty list; give at least one run entry, e.g. {\"mode\": \"greedy\"}");

  std::vector<RunEntry> entries;
  uint64_t total = 0;  // saturates at UINT64_MAX: "more than" then
  for (size_t i = 0; i < runs.size(); ++i) {
    entries.push_back(check_run_entry(r, runs[i], element("runs", i), root));
    uint64_t count = spec.prompts.size();
    for (const auto& axis : entries.back().axes) count = saturating_product(count, axis.size());
    total = total > UINT64_MAX - count ? UINT64_MAX : total + count;
  }
  const uint64_t allowed = budget.max_runs > budget.used ? budget.max_runs - budget.used : 0;
  if (total > allowed) {
    const std::string count = total == UINT64_MAX ? "at least " + std::to_string(UINT64_MAX) : std::to_string(total);
    r.fail("runs", "expands to " + count + " runs (prompts x each list's length), more than --max-runs " +
                       std::to_string(budget.max_runs) + " allows" +
                       (budget.used ? " after the " + std::to_string(budget.used) + " runs of the files before it" : "") +
                       "; check for a list where one value was meant, or raise --max-runs (at most " +
                       std::to_string(kMaxRunsCeiling) + ") and split the work with --shard");
  }

  std::map<std::string, std::string> seen_ids;  // id -> where it came from
  for (size_t pi = 0; pi < spec.prompts.size(); ++pi) {
    for (const RunEntry& e : entries) {
      std::vector<size_t> pick(e.axes.size(), 0);
      while (true) {
        ExpandedRun run;
        run.experiment = spec.name;
        run.prompt_index = static_cast<int64_t>(pi);
        run.prompt = spec.prompts[pi];
        run.source = e.source;
        run.params.sampling.mode = e.mode;
        run.params.top_candidates = top_candidates;
        for (size_t a = 0; a < e.axes.size(); ++a) {
          const auto& [value, where] = e.axes[a][pick[a]];
          r.apply_checked_type(e.keys[a], value, where, run.params);
          run.value_paths[e.keys[a]] = where;
        }
        check_combination(r, run.params, e.source);
        run.id = run_id(spec.name, run.prompt_index, run.prompt, run.params);
        claim_id(r, seen_ids, run);
        spec.runs.push_back(std::move(run));
        // Odometer over the axes: the last axis varies fastest.
        size_t a = e.axes.size();
        while (a > 0 && ++pick[a - 1] == e.axes[a - 1].size()) pick[--a] = 0;
        if (a == 0) break;
      }
    }
  }
  spec.spec = std::move(parsed.value);
  return spec;
}

void override_top_candidates(ExperimentSpec& spec, int64_t top_candidates) {
  const SpecReader r(spec.path);
  if (top_candidates < 0) r.fail_value("record.top_candidates", top_candidates, allowed_for("top_candidates"));
  // Stored as parsing the edited file would store it (a non-negative integer is unsigned JSON).
  spec.spec["record"]["top_candidates"] = static_cast<uint64_t>(top_candidates);
  std::map<std::string, std::string> seen_ids;  // id -> where it came from
  for (ExpandedRun& run : spec.runs) {
    run.params.top_candidates = top_candidates;
    run.id = run_id(spec.name, run.prompt_index, run.prompt, run.params);
    claim_id(r, seen_ids, run);
  }
}

void override_engine(ExperimentSpec& spec, Engine engine) {
  const SpecReader r(spec.path);
  spec.spec["engine"] = to_string(engine);
  if (spec.spec.contains("runs") && spec.spec["runs"].is_array())
    for (json& entry : spec.spec["runs"])
      if (entry.is_object()) entry.erase("engine");
  for (ExpandedRun& run : spec.runs) {
    run.params.engine = engine;
    for (const ParamProblem& problem : check_run_params(run.params))
      r.fail("run " + run.id + " with --engine " + to_string(engine), describe_problem(problem, problem.field));
  }
}

ExperimentSpec load_experiment(const std::string& path, RunBudget budget) {
  const BoundedRead read = read_bounded(path, kMaxExperimentBytes, Expect::json_object);
  if (!read.ok())
    throw SpecError(path + ": " + read.problem + "; give the path of an experiment file (e.g. experiments/article/greedy.json)");
  return parse_experiment(read.text, path, budget);
}

std::vector<ExperimentSpec> load_experiments(const std::vector<std::string>& paths, uint64_t max_runs) {
  if (paths.empty()) throw SpecError("no experiment files given; e.g. genrepro run experiments/article/*.json");
  std::vector<ExperimentSpec> specs;
  std::map<std::string, std::string> names;
  uint64_t used = 0;
  for (const auto& path : paths) {
    specs.push_back(load_experiment(path, RunBudget{max_runs, used}));
    used += specs.back().runs.size();
    const auto [it, inserted] = names.emplace(specs.back().name, path);
    if (!inserted)
      throw SpecError(path + ": name: \"" + specs.back().name + "\" is also the name of " + it->second +
                      "; run ids would collide, so give each experiment its own name");
  }
  return specs;
}

}  // namespace genrepro
