#include "report/report_evidence.hpp"

#include <filesystem>

namespace genrepro {

ReportDocument read_report_evidence(const std::string& path) {
  return ReportDocument{std::filesystem::path(path).filename().string(), read_evidence(path), ""};
}

}  // namespace genrepro
