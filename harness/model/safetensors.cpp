#include "model/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "util/errors.hpp"

namespace genrepro {

namespace {

// The 8-byte little-endian header length that starts every safetensors file.
constexpr uint64_t kHeaderLengthBytes = 8;
// The safetensors format itself caps the JSON header at 100 MB; a larger length is garbage, and
// refusing it keeps a corrupt file from triggering a huge allocation.
constexpr uint64_t kMaxHeaderBytes = 100ull * 1000 * 1000;
// Largest tensor rank we accept; real checkpoints use <= 4.
constexpr size_t kMaxRank = 8;

uint64_t read_le_u64(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint64_t>(p[i]);
  return v;
}

void write_le_u64(char* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// Float conversions by bit manipulation: exact, no rounding, independent of the FPU mode.
float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {  // inf / NaN
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {  // normal: rebias 15 -> 127
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {  // +-0
    bits = sign;
  } else {  // subnormal half: normalise into a normal float
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

size_t dtype_size(TensorDType d) { return d == TensorDType::F32 ? 4 : 2; }

const char* dtype_name(TensorDType d) {
  switch (d) {
    case TensorDType::F32: return "F32";
    case TensorDType::F16: return "F16";
    case TensorDType::BF16: return "BF16";
  }
  return "?";
}

}  // namespace

// Read-only mmap of a whole file; unmapped when the last SafetensorsFile sharing it goes away.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
      throw ModelFileError(path + ": cannot open (" + std::strerror(errno) +
                           "); pass a model directory holding model.safetensors");
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      throw ModelFileError(path + ": cannot stat (" + std::strerror(err) + ")");
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw ModelFileError(path + ": not a regular file (a directory, pipe, FIFO or device); the weights are " +
                           "memory-mapped, so give model.safetensors as a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw ModelFileError(path + ": cannot memory-map " + std::to_string(size_) + " bytes (" +
                             std::strerror(err) + ")");
      }
      data_ = static_cast<const std::byte*>(p);
    }
    ::close(fd);  // the mapping stays valid after close
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }

 private:
  const std::byte* data_ = nullptr;
  uint64_t size_ = 0;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

TensorDType parse_dtype(const std::string& path, const std::string& name, const nlohmann::json& j) {
  if (!j.is_string())
    throw ModelFileError(path + ": tensor '" + name + "' has a non-string dtype " + j.dump() +
                         "; allowed: F32, F16, BF16");
  const std::string s = j.get<std::string>();
  if (s == "F32") return TensorDType::F32;
  if (s == "F16") return TensorDType::F16;
  if (s == "BF16") return TensorDType::BF16;
  throw ModelFileError(path + ": tensor '" + name + "' has dtype " + s +
                       ", allowed: F32, F16, BF16; convert the checkpoint to float32");
}

// Parses one header entry, checking shape against byte size (overflow-safe).
TensorInfo parse_tensor_entry(const std::string& path, const std::string& name, const nlohmann::json& j) {
  const std::string where = path + ": tensor '" + name + "'";
  if (!j.is_object()) throw ModelFileError(where + " header entry is not an object: " + j.dump());
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!j.contains(key)) throw ModelFileError(where + " header entry lacks \"" + key + "\"");
  TensorInfo t;
  t.name = name;
  t.dtype = parse_dtype(path, name, j.at("dtype"));

  const auto& shape = j.at("shape");
  if (!shape.is_array() || shape.size() > kMaxRank)
    throw ModelFileError(where + " has shape " + shape.dump() + ", expected an array of at most " +
                         std::to_string(kMaxRank) + " non-negative integers");
  // Byte count computed with an overflow check: a garbage shape must not wrap around.
  uint64_t bytes = dtype_size(t.dtype);
  for (const auto& d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw ModelFileError(where + " has shape " + shape.dump() + ", expected non-negative integers");
    const uint64_t dim = d.get<uint64_t>();
    if (dim != 0 && bytes > std::numeric_limits<uint64_t>::max() / dim)
      throw ModelFileError(where + " has shape " + shape.dump() + " whose byte size overflows");
    bytes *= dim;
    t.shape.push_back(static_cast<int64_t>(dim));
  }

  const auto& off = j.at("data_offsets");
  if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
    throw ModelFileError(where + " has data_offsets " + off.dump() +
                         ", expected [begin, end] with non-negative integers");
  t.begin = off[0].get<uint64_t>();
  t.end = off[1].get<uint64_t>();
  if (t.end < t.begin)
    throw ModelFileError(where + " has data_offsets [" + std::to_string(t.begin) + ", " +
                         std::to_string(t.end) + "] with end before begin");
  if (t.end - t.begin != bytes)
    throw ModelFileError(where + " has shape " + shape_text(t.shape) + " " + dtype_name(t.dtype) + " (" +
                         std::to_string(bytes) + " bytes) but data_offsets span " +
                         std::to_string(t.end - t.begin) + " bytes; the file is corrupt");
  return t;
}

}  // namespace

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.path_ = path;
  f.map_ = std::make_shared<MappedFile>(path);
  const uint64_t file_size = f.map_->size();
  const std::string fix = "; the file is truncated or not safetensors, download or regenerate it";

  if (file_size < kHeaderLengthBytes)
    throw ModelFileError(path + ": file is " + std::to_string(file_size) +
                         " bytes, too short for the 8-byte safetensors header length" + fix);
  const uint64_t header_len = read_le_u64(f.map_->data());
  if (header_len > kMaxHeaderBytes || header_len > file_size - kHeaderLengthBytes)
    throw ModelFileError(path + ": header length " + std::to_string(header_len) + " exceeds the " +
                         std::to_string(file_size - kHeaderLengthBytes) + " bytes after it (limit " +
                         std::to_string(kMaxHeaderBytes) + ")" + fix);
  f.data_offset_ = kHeaderLengthBytes + header_len;
  const uint64_t data_size = file_size - f.data_offset_;

  const char* header_begin = reinterpret_cast<const char*>(f.map_->data() + kHeaderLengthBytes);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(header_begin, header_begin + header_len);
  } catch (const nlohmann::json::exception& e) {
    // nlohmann's message may span lines; keep ours to one.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw ModelFileError(path + ": header is not valid JSON (" + what + ")" + fix);
  }
  if (!header.is_object())
    throw ModelFileError(path + ": header is JSON but not an object" + fix);

  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        throw ModelFileError(path + ": __metadata__ is not an object of strings");
      for (const auto& [k, v] : entry.items()) {
        if (!v.is_string())
          throw ModelFileError(path + ": __metadata__ value for '" + k + "' is not a string");
        f.metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    TensorInfo t = parse_tensor_entry(path, name, entry);
    if (t.end > data_size)
      throw ModelFileError(path + ": tensor '" + name + "' has data_offsets [" + std::to_string(t.begin) +
                           ", " + std::to_string(t.end) + "] past the end of the " + std::to_string(data_size) +
                           "-byte data section" + fix);
    f.tensors_.emplace(name, std::move(t));
  }

  // Overlap check: sorted by begin, each tensor must end before the next one starts.
  std::vector<const TensorInfo*> by_begin;
  for (const auto& kv : f.tensors_) by_begin.push_back(&kv.second);
  std::sort(by_begin.begin(), by_begin.end(), [](const TensorInfo* a, const TensorInfo* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  const TensorInfo* furthest = nullptr;  // the non-empty tensor reaching furthest so far
  for (const TensorInfo* b : by_begin) {
    if (b->end == b->begin) continue;  // empty tensors occupy no bytes
    if (furthest && b->begin < furthest->end)
      throw ModelFileError(path + ": tensors '" + furthest->name + "' [" + std::to_string(furthest->begin) +
                           ", " + std::to_string(furthest->end) + ") and '" + b->name + "' [" +
                           std::to_string(b->begin) + ", " + std::to_string(b->end) + ") overlap" + fix);
    if (!furthest || b->end > furthest->end) furthest = b;
  }
  return f;
}

const TensorInfo& SafetensorsFile::info(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw ModelFileError(path_ + ": missing tensor '" + name + "' (the file holds " +
                         std::to_string(tensors_.size()) + " tensors); is this a GPT-2 checkpoint?");
  return it->second;
}

const std::byte* SafetensorsFile::data(const TensorInfo& t) const {
  return map_->data() + data_offset_ + t.begin;
}

std::vector<float> SafetensorsFile::to_f32(const TensorInfo& t) const {
  const std::byte* p = data(t);
  const auto n = static_cast<size_t>(t.numel());
  std::vector<float> out(n);
  switch (t.dtype) {
    case TensorDType::F32:
      // Safetensors is little-endian, as is every platform genrepro supports (x86-64, aarch64).
      if (n) std::memcpy(out.data(), p, n * sizeof(float));
      break;
    case TensorDType::F16:
    case TensorDType::BF16:
      for (size_t i = 0; i < n; ++i) {
        const uint16_t h = static_cast<uint16_t>(static_cast<uint16_t>(p[2 * i]) |
                                                 (static_cast<uint16_t>(p[2 * i + 1]) << 8));
        out[i] = t.dtype == TensorDType::F16 ? f16_to_f32(h) : bf16_to_f32(h);
      }
      break;
  }
  return out;
}

// ---- writer ----

namespace {

std::string build_header(const std::vector<SafetensorsEntry>& entries,
                         const std::map<std::string, std::string>& metadata, uint64_t* data_bytes) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& e : entries) {
    uint64_t bytes = sizeof(float);
    for (int64_t d : e.shape) {
      if (d < 0) throw std::invalid_argument("write_safetensors: negative dimension in " + e.name);
      bytes *= static_cast<uint64_t>(d);
    }
    header[e.name] = {{"dtype", "F32"}, {"shape", e.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  // The format asks for the data section to start 8-byte aligned; pad the header with spaces.
  while ((kHeaderLengthBytes + text.size()) % 8 != 0) text.push_back(' ');
  *data_bytes = offset;
  return text;
}

}  // namespace

void write_safetensors_f32_streamed(const std::string& path, const std::vector<SafetensorsEntry>& entries,
                                    const std::function<void(size_t, std::vector<float>&)>& fill,
                                    const std::map<std::string, std::string>& metadata) {
  uint64_t data_bytes = 0;
  const std::string header = build_header(entries, metadata, &data_bytes);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ModelFileError(path + ": cannot write (" + std::strerror(errno) + ")");
    char len[kHeaderLengthBytes];
    write_le_u64(len, header.size());
    out.write(len, sizeof len);
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    std::vector<float> values;
    for (size_t i = 0; i < entries.size(); ++i) {
      values.clear();
      fill(i, values);
      int64_t expect = 1;
      for (int64_t d : entries[i].shape) expect *= d;
      if (static_cast<int64_t>(values.size()) != expect) {
        out.close();
        std::remove(tmp.c_str());
        throw std::invalid_argument("write_safetensors: tensor " + entries[i].name + " has " +
                                    std::to_string(values.size()) + " values, shape needs " +
                                    std::to_string(expect));
      }
      // Little-endian float32, as on every supported platform.
      out.write(reinterpret_cast<const char*>(values.data()),
                static_cast<std::streamsize>(values.size() * sizeof(float)));
    }
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      throw ModelFileError(path + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw ModelFileError(path + ": cannot rename the temporary file into place (" + std::strerror(err) + ")");
  }
}

void write_safetensors_f32(const std::string& path, const std::vector<F32Tensor>& tensors,
                           const std::map<std::string, std::string>& metadata) {
  std::vector<SafetensorsEntry> entries;
  for (const auto& t : tensors) entries.push_back({t.name, t.shape});
  write_safetensors_f32_streamed(
      path, entries, [&](size_t i, std::vector<float>& out) { out = tensors[i].values; }, metadata);
}

}  // namespace genrepro
