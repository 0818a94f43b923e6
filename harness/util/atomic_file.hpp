#pragma once
// Writing a file so that readers only ever see the old content or the complete new content:
// the new bytes go to a temporary file in the same directory (same filesystem, so the final
// rename is atomic), are flushed to disk (fsync), and only then renamed over the target.
// An interrupted or failed write leaves an existing file untouched and no temporary behind.
#include <string>

namespace genrepro {

// Creates missing parent directories. Throws genrepro::Error naming `path` and the failing step
// (cannot create directory, disk full, rename refused, ...).
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace genrepro
