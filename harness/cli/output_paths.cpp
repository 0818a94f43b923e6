#include "cli/output_paths.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) throw UsageError(flag + " is empty; give a file path");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status))
    throw UsageError(flag + " " + path + ": is a directory; give a file path such as " + path + "/out.json");
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw UsageError(flag + " " + path + ": is not a regular file (a device, FIFO or socket); give a file path");
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw UsageError(flag + " " + path + ": directory " + parent.string() + " does not exist; create it first");
  for (const std::string& input : inputs)
    if (same_file(path, input))
      throw UsageError(flag + " " + path + ": is the input " + input + "; write the output to another file");
}

void check_output_directory(const std::string& flag, const std::string& path) {
  if (path.empty()) throw UsageError(flag + " is empty; give a directory path");
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_directory(status))
    throw UsageError(flag + " " + path + " exists and is not a directory; give a directory path");
}

}  // namespace genrepro::cli
