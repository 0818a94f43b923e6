#pragma once
// What model_files.cpp (a directory in cache layout) and model_resolution.cpp (which cache to
// search) both know of the Hugging Face cache. Internal to harness/model/.
#include <filesystem>

namespace genrepro {

// The Hugging Face cache keeps a repository `gpt2` under hub/models--gpt2/{refs,snapshots,blobs}.
inline constexpr const char* kHfRepoFolder = "models--gpt2";

// A directory, following links; false (never an exception) when the path cannot be read.
bool is_dir(const std::filesystem::path& p);

}  // namespace genrepro
