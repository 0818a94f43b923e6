#pragma once
// Output paths are checked before any work starts, the same way in every verb, so that a grid is
// never computed only to fail at the end, and an input is never overwritten by an output.
#include <string>
#include <vector>

namespace genrepro::cli {

// `path` (given as `flag`) must be non-empty, must not be a directory or another non-regular
// file (a device, a FIFO: an atomic replace would swap the node itself), no directory on its way
// may be a file (missing ones are made by the writer), and it must not be the same file as any of `inputs` (compared by device and inode, so
// another spelling of the same file is caught). Throws UsageError naming the flag, the value
// and the fix.
void check_output_file(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs);

// A directory a verb writes into (report --out, bless --into; created if missing): non-empty,
// and not an existing file (so not an input either).
void check_output_directory(const std::string& flag, const std::string& path);

}  // namespace genrepro::cli
