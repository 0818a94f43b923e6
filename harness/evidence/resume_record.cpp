#include "evidence/resume_record.hpp"

#include "evidence/evidence.hpp"
#include "util/errors.hpp"

namespace genrepro {

OrderedJson resume_to_json(const ResumeRecord& r) {
  return {{"checkpoint", r.checkpoint}, {"sha256", r.sha256}, {"runs_kept", r.runs_kept}};
}

std::optional<ResumeRecord> resume_from_json(const OrderedJson& evidence, const std::string& file) {
  if (!evidence.is_object() || !evidence.contains("resumed")) return std::nullopt;
  const OrderedJson& j = evidence["resumed"];
  const auto wrong = [&](const std::string& path, const std::string& expected) {
    throw EvidenceError(file + ": resumed" + path + ": expected " + expected + "; " + kRegenerateEvidenceHint);
  };
  if (!j.is_object()) wrong("", "an object {\"checkpoint\", \"sha256\", \"runs_kept\"}");
  ResumeRecord r;
  if (!j.contains("checkpoint") || !j["checkpoint"].is_string()) wrong(".checkpoint", "a string");
  if (!j.contains("sha256") || !j["sha256"].is_string() || j["sha256"].get<std::string>().size() != 64)
    wrong(".sha256", "64 hex digits");
  if (!j.contains("runs_kept") || !j["runs_kept"].is_number_integer() || j["runs_kept"].get<int64_t>() < 1)
    wrong(".runs_kept", "an integer >= 1");
  r.checkpoint = j["checkpoint"].get<std::string>();
  r.sha256 = j["sha256"].get<std::string>();
  r.runs_kept = j["runs_kept"].get<int64_t>();
  const auto runs = evidence.find("runs");
  if (runs != evidence.end() && runs->is_array() && static_cast<std::size_t>(r.runs_kept) > runs->size())
    wrong(".runs_kept", "at most the " + std::to_string(runs->size()) + " runs the evidence holds, found " + std::to_string(r.runs_kept));
  return r;
}

}  // namespace genrepro
