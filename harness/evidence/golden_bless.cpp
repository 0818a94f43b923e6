#include "evidence/golden_bless.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include "evidence/diff_format.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;

// Runs are filed by experiment name, so a run must have one.
void check_experiment_names(const EvidenceFile& evidence) {
  for (std::size_t i = 0; i < evidence.evidence.runs.size(); ++i)
    if (evidence.evidence.runs[i].experiment.empty())
      throw EvidenceError(evidence.path + ": runs[" + std::to_string(i) + "].experiment: expected the experiment's name (a non-empty " +
                          "string), found string \"\"; bless files golden runs by experiment — regenerate the evidence with 'genrepro run'");
}

// The evidence restricted to one experiment: its runs and its experiments[] entry.
Evidence part_of(const Evidence& e, const std::string& experiment) {
  Evidence part;
  part.schema = e.schema;
  part.genrepro = e.genrepro;
  part.created_utc = e.created_utc;
  part.environment = e.environment;
  part.model = e.model;
  for (const RunRecord& r : e.runs)
    if (r.experiment == experiment) part.runs.push_back(r);
  for (const ExperimentRecord& x : e.experiments)
    if (x.name == experiment) part.experiments.push_back(x);
  return part;
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
  check_experiment_names(evidence);
  std::vector<std::string> order;  // experiments in first-run order
  for (const RunRecord& r : evidence.evidence.runs)
    if (std::find(order.begin(), order.end(), r.experiment) == order.end()) order.push_back(r.experiment);
  std::map<std::string, std::string> file_owner;  // two names that sanitize alike would overwrite each other
  std::vector<GoldenFilePlan> plans;
  for (const std::string& e : order) {
    GoldenFilePlan p;
    p.experiment = e;
    p.path = (fs::path(into_dir) / golden_file_name(e)).string();
    const auto [it, fresh] = file_owner.emplace(p.path, e);
    if (!fresh)
      throw EvidenceError(evidence.path + ": experiments \"" + it->second + "\" and \"" + e + "\" would both be blessed into " +
                          p.path + "; rename one of them");
    const Evidence part = part_of(evidence.evidence, e);
    p.doc = strip_volatile(evidence_to_json(part));
    p.runs = part.runs.size();
    std::error_code ec;
    p.exists = fs::exists(p.path, ec);
    if (p.exists) {
      const EvidenceDiff d = diff_evidence({read_evidence_file(p.path)}, EvidenceFile{evidence.path, part}, options);
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

void write_json_atomically(const std::string& path, const OrderedJson& doc) {
  try {
    write_file_atomically(path, doc.dump(2, ' ', false, OrderedJson::error_handler_t::strict) + "\n");
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
