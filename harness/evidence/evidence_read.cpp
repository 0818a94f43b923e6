// Reading evidence, first stage: the file. One bounded read (kMaxEvidenceBytes), one parse
// with one nesting limit (kMaxJsonDepth) that keeps the file's key order, then the conversion
// (evidence_from_json.cpp) and the checks (evidence_checks.cpp). Every verb reads through here.
#include <algorithm>
#include <filesystem>
#include <map>

#include "evidence/evidence.hpp"
#include "util/bounded_read.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;

std::string evidence_text_of(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw EvidenceError(path + ": is a directory, expected an evidence file; give a file (only GOLDEN may be a directory)");
  BoundedRead read = read_bounded(path, kMaxEvidenceBytes, Expect::json_object);
  if (!read.ok()) throw EvidenceError(path + ": " + read.problem + "; " + kGiveEvidenceHint);
  return std::move(read.text);
}

// The *.json files of a golden directory: not recursive, hidden files skipped, sorted by name.
std::vector<std::string> golden_file_names(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > 5 && name.front() != '.' && e.path().extension() == ".json")
      names.push_back(e.path().string());
  }
  if (ec) throw EvidenceError(dir + ": cannot list the golden directory (" + ec.message() + ")");
  if (names.empty())
    throw EvidenceError(dir + ": golden directory holds no *.json evidence files; bless some with 'genrepro bless EVIDENCE --into " +
                        dir + "'");
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

Evidence read_evidence(const std::string& path) {
  const std::string text = evidence_text_of(path);
  const ParsedJson<OrderedJson> parsed = parse_ordered_json_text(text);
  if (!parsed.ok()) throw EvidenceError(path + ": " + parsed.problem + "; " + kGiveEvidenceHint);
  return evidence_from_json(parsed.value, path);
}

EvidenceFile read_evidence_file(const std::string& path) { return EvidenceFile{path, read_evidence(path)}; }

std::vector<EvidenceFile> read_golden(const std::string& file_or_dir) {
  std::error_code ec;
  if (!fs::is_directory(file_or_dir, ec)) return {read_evidence_file(file_or_dir)};
  std::vector<EvidenceFile> files;
  std::map<std::string, std::string> owner;  // run id -> file
  for (const std::string& name : golden_file_names(file_or_dir)) {
    files.push_back(read_evidence_file(name));
    for (const RunRecord& run : files.back().evidence.runs) {
      const auto [it, fresh] = owner.emplace(run.id, name);
      if (!fresh)
        throw EvidenceError(name + ": run id \"" + run.id + "\" is also in " + it->second +
                            "; golden files must not overlap — remove the stale file (bless writes one file per experiment)");
    }
  }
  return files;
}

}  // namespace genrepro
