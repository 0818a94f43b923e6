#pragma once
// A model in Hugging Face layout written as GGUF float32, the file llama.cpp loads: architecture
// "gpt2", llama.cpp's tensor names, Conv1D weights transposed to the [out][in] rows ggml
// multiplies, and GPT-2's tokenizer (vocab in id order, merges in rank order). The output depends
// only on the input files: no timestamp, no path, so the same model always gives the same bytes.
// The sha256 of every source file is written into the GGUF's metadata, so a GGUF found later can
// be tied to the files it came from. No libtorch here.
#include <cstdint>
#include <map>
#include <string>

#include "model/model_files.hpp"

namespace genrepro {

// GGUF metadata keys under which the export records each source file's sha256
// ("genrepro.source.model.safetensors.sha256", ...) and the exporter's format revision.
inline constexpr const char* kGgufSourcePrefix = "genrepro.source.";
inline constexpr const char* kGgufExportRevisionKey = "genrepro.export_revision";
// Bumped whenever the same input would give other bytes.
inline constexpr uint32_t kGgufExportRevision = 1;

struct GgufExport {
  std::string path;
  std::string sha256;                          // of the written file
  uint64_t bytes = 0;
  std::map<std::string, std::string> sources;  // file name -> sha256 (config.json, model.safetensors, ...)
  int64_t tensors = 0;
};

// Writes `model` to `out` atomically (a temporary file beside it, renamed into place: an existing
// file is replaced only by a complete one). Throws ModelFileError naming the file and the
// problem (a tokenizer whose size is not config.json's vocab_size, an unreadable tensor, a disk
// that filled up).
GgufExport export_gguf(const ModelFiles& model, const std::string& out);

}  // namespace genrepro
