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
  // A missing directory is made by the writer (util/atomic_file.hpp); a file in its place cannot be.
  for (fs::path parent = fs::path(path).parent_path(); !parent.empty(); parent = parent.parent_path()) {
    const fs::file_status s = fs::status(parent, ec);
    if (fs::is_directory(s)) break;
    if (fs::exists(s))
      throw UsageError(flag + " " + path + ": " + parent.string() + " is not a directory; give a path inside a directory");
    if (parent == parent.parent_path()) break;
  }
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
