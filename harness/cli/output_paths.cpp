#include "cli/output_paths.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "util/errors.hpp"

namespace genrepro::cli {

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError(flag + " is empty; give a file path");
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(flag + " " + path + ": is a directory; give a file path such as " + path + "/out.json");
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw UsageError(flag + " " + path + ": directory " + parent.string() + " does not exist; create it first");
  for (const std::string& input : inputs)
    if (same_file(path, input))
      throw UsageError(flag + " " + path + ": is the input " + input + "; write the output to another file");
}

}  // namespace genrepro::cli
