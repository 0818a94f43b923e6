#pragma once
// A safetensors reader: 8-byte little-endian header length, a JSON header, then raw tensor data.
// Everything is checked before any tensor byte is touched (header length against the file size,
// dtypes, shapes against byte sizes, offsets against the data size and against each other), and
// the file is memory-mapped rather than copied. No libtorch here.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace genrepro {

enum class TensorDType { F32, F16, BF16 };

struct TensorInfo {
  std::string name;
  TensorDType dtype = TensorDType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // offsets within the data section (after the header)
  uint64_t end = 0;
  int64_t numel() const;
};

class MappedFile;  // RAII mmap of a whole file, read-only

class SafetensorsFile {
 public:
  // Throws ModelFileError naming `path` and the problem (file missing, header length past the
  // end, header not JSON, unknown dtype, offsets out of range or overlapping, ...).
  static SafetensorsFile open(const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  const TensorInfo& info(const std::string& name) const;  // throws ModelFileError if missing

  // Pointer to the tensor's raw bytes inside the mapping (valid while this object lives).
  const std::byte* data(const TensorInfo& t) const;
  // The mapping itself, for a reader that keeps pointers into it (data()) beyond this object's
  // life: they stay valid while the returned handle lives.
  std::shared_ptr<const void> mapping() const { return map_; }
  // The tensor as float32, upcasting F16 / BF16; a copy.
  std::vector<float> to_f32(const TensorInfo& t) const;

 private:
  std::string path_;
  std::shared_ptr<MappedFile> map_;
  uint64_t data_offset_ = 0;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Writes a safetensors file of float32 tensors (for fixture models), atomically
// (temporary file + rename). Tensors are written in the order given; offsets are contiguous.
struct F32Tensor {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
};
void write_safetensors_f32(const std::string& path, const std::vector<F32Tensor>& tensors,
                           const std::map<std::string, std::string>& metadata = {});

// The streaming form, for files too large to hold twice in memory (the gpt2-124m-shape fixture):
// entries give names and shapes; fill(i, out) puts tensor i's numel() values into `out`.
struct SafetensorsEntry {
  std::string name;
  std::vector<int64_t> shape;
};
void write_safetensors_f32_streamed(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                                    const std::function<void(size_t, std::vector<float>&)>& fill,
                                    const std::map<std::string, std::string>& metadata = {});

// Shapes as text for error messages: "[64, 192]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace genrepro
