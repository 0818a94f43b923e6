#include "evidence/golden_bless.hpp"

#include <filesystem>
#include <map>

#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "evidence/evidence.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;
using Json = EvidenceJson;

std::string experiment_of(const EvidenceFile& evidence, std::size_t i) {
  const Json& run = evidence.doc["runs"][i];
  const std::string at = "runs[" + std::to_string(i) + "].experiment";
  if (!run.contains("experiment") || !run["experiment"].is_string() || run["experiment"].get<std::string>().empty())
    throw EvidenceError(evidence.path + ": " + at + ": expected the experiment's name (a non-empty string); bless files " +
                        "golden runs by experiment — regenerate the evidence with 'genrepro run'");
  return run["experiment"].get<std::string>();
}

}  // namespace

std::string golden_file_name(const std::string& experiment) {
  std::string name;
  for (char c : experiment) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    name += plain ? c : '_';
  }
  if (name.empty() || name.front() == '.') name.insert(name.begin(), '_');  // never hidden, never ".."
  return name + ".json";
}

std::vector<GoldenFilePlan> plan_bless(const EvidenceFile& evidence, const std::string& into_dir,
                                       const EvidenceDiffOptions& options) {
  const Json stripped = strip_volatile(evidence.doc);
  std::vector<std::string> order;                      // experiments in first-run order
  std::map<std::string, std::vector<std::size_t>> runs_of;
  for (std::size_t i = 0; i < stripped["runs"].size(); ++i) {
    const std::string e = experiment_of(evidence, i);
    if (!runs_of.count(e)) order.push_back(e);
    runs_of[e].push_back(i);
  }
  std::map<std::string, std::string> file_owner;  // two names that sanitize alike would overwrite each other
  std::vector<GoldenFilePlan> plans;
  for (const std::string& e : order) {
    GoldenFilePlan p;
    p.experiment = e;
    p.path = (fs::path(into_dir) / golden_file_name(e)).string();
    auto [it, fresh] = file_owner.emplace(p.path, e);
    if (!fresh)
      throw EvidenceError(evidence.path + ": experiments \"" + it->second + "\" and \"" + e + "\" would both be blessed into " +
                          p.path + "; rename one of them");
    p.doc = Json::object();
    for (auto f = stripped.begin(); f != stripped.end(); ++f) {
      if (f.key() == "runs") {
        Json runs = Json::array();
        for (std::size_t i : runs_of[e]) runs.push_back(stripped["runs"][i]);
        p.doc["runs"] = std::move(runs);
      } else if (f.key() == "experiments" && f.value().is_array()) {
        Json kept = Json::array();
        for (const Json& x : f.value())
          if (x.is_object() && x.contains("name") && x["name"] == e) kept.push_back(x);
        p.doc["experiments"] = std::move(kept);
      } else {
        p.doc[f.key()] = f.value();
      }
    }
    p.runs = runs_of[e].size();
    std::error_code ec;
    p.exists = fs::exists(p.path, ec);
    if (p.exists) {
      const EvidenceDiff d = diff_evidence({load_evidence_json(p.path)}, EvidenceFile{evidence.path, p.doc}, options);
      p.changes = !d.agree();
      p.preview = p.changes ? format_diff_text(d) : std::string();
    } else {
      p.preview = "new golden file " + p.path + " (" + std::to_string(p.runs) + " runs)\n";
    }
    plans.push_back(std::move(p));
  }
  if (plans.empty()) throw EvidenceError(evidence.path + ": holds no runs; there is nothing to bless");
  return plans;
}

std::string format_bless_preview(const std::vector<GoldenFilePlan>& plans) {
  std::string body, lines;
  for (const GoldenFilePlan& p : plans) {
    if (p.changes) body += p.preview;
    lines += "bless: " + p.path + ": " + (!p.exists ? "new" : p.changes ? "changes" : "agrees, left as is") + ", " +
             std::to_string(p.runs) + " runs\n";
  }
  return body + lines;
}

void write_json_atomically(const std::string& path, const EvidenceJson& doc) {
  try {
    write_file_atomically(path, doc.dump(2, ' ', false, Json::error_handler_t::strict) + "\n");
  } catch (const Error& e) {
    throw EvidenceError(std::string(e.what()) + " (golden file; the previous one, if any, is unchanged)");
  }
}

std::size_t write_golden(const std::vector<GoldenFilePlan>& plans) {
  std::size_t written = 0;
  for (const GoldenFilePlan& p : plans)
    if (p.changes) {
      write_json_atomically(p.path, p.doc);
      ++written;
    }
  return written;
}

}  // namespace genrepro
