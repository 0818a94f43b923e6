#include "model/gguf_export.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/gpt2_tensors.hpp"
#include "model/model_config.hpp"
#include "model/safetensors.hpp"
#include "util/errors.hpp"
#include "util/sha256.hpp"

namespace genrepro {

namespace {

// GGUF v3 (ggml/docs/gguf.md): little-endian, every tensor's data aligned to 32 bytes.
constexpr uint32_t kGgufVersion = 3;
constexpr uint64_t kAlignment = 32;
enum GgufType : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7, kString = 8, kArray = 9 };
constexpr uint32_t kTensorF32 = 0;
constexpr uint32_t kFileTypeAllF32 = 0;
// llama_token_type: GPT-2's <|endoftext|> is a control token, every other token is normal text.
constexpr int32_t kTokenNormal = 1, kTokenControl = 3;

class GgufHeader {
 public:
  void u32(uint32_t v) { raw(&v, sizeof v); }
  void u64(uint64_t v) { raw(&v, sizeof v); }
  void i32(int32_t v) { raw(&v, sizeof v); }
  void f32(float v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    bytes_.append(s);
  }
  void key(const std::string& k, GgufType t) {
    str(k);
    u32(t);
    ++kv_count_;
  }
  void kv_u32(const std::string& k, uint32_t v) { key(k, kU32), u32(v); }
  void kv_f32(const std::string& k, float v) { key(k, kF32), f32(v); }
  void kv_bool(const std::string& k, bool v) { key(k, kBool), bytes_.push_back(v ? 1 : 0); }
  void kv_str(const std::string& k, const std::string& v) { key(k, kString), str(v); }
  void kv_strings(const std::string& k, const std::vector<std::string>& v) {
    key(k, kArray), u32(kString), u64(v.size());
    for (const std::string& s : v) str(s);
  }
  void kv_i32s(const std::string& k, const std::vector<int32_t>& v) {
    key(k, kArray), u32(kI32), u64(v.size());
    for (int32_t x : v) i32(x);
  }
  const std::string& bytes() const { return bytes_; }
  uint64_t kv_count() const { return kv_count_; }

 private:
  void raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
  uint64_t kv_count_ = 0;
};

// One tensor of the GGUF: llama.cpp's name, ggml's dims (ne[0] innermost) and where its values
// come from in the safetensors file.
struct GgufTensor {
  std::string name;
  std::vector<int64_t> ne;
  std::string source;   // the safetensors name
  bool transpose = false;  // a Conv1D weight: [in][out] in the file, [out][in] in the GGUF

  uint64_t bytes() const {
    uint64_t n = sizeof(float);
    for (int64_t d : ne) n *= static_cast<uint64_t>(d);
    return n;
  }
};

uint64_t aligned(uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

std::vector<GgufTensor> gguf_tensors(const SafetensorsFile& file, const Gpt2Config& c) {
  const int64_t C = c.n_embd, F = c.mlp_width();
  const auto at = [&](const std::string& hf) { return find_tensor_name(file, hf); };
  std::vector<GgufTensor> t = {
      {"token_embd.weight", {C, c.vocab_size}, at("wte.weight")},
      {"position_embd.weight", {C, c.n_positions}, at("wpe.weight")},
      {"output_norm.weight", {C}, at("ln_f.weight")},
      {"output_norm.bias", {C}, at("ln_f.bias")},
  };
  // A separate lm_head is GPT-2's only when the checkpoint has one; otherwise llama.cpp ties the
  // head to token_embd, as GPT2LMHeadModel does.
  for (const std::string name : {"lm_head.weight", "transformer.lm_head.weight"})
    if (file.has(name)) t.push_back({"output.weight", {C, c.vocab_size}, name});
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".", h = "h." + std::to_string(i) + ".";
    const std::vector<GgufTensor> block = {
        {b + "attn_norm.weight", {C}, at(h + "ln_1.weight")},
        {b + "attn_norm.bias", {C}, at(h + "ln_1.bias")},
        {b + "attn_qkv.weight", {C, 3 * C}, at(h + "attn.c_attn.weight"), true},
        {b + "attn_qkv.bias", {3 * C}, at(h + "attn.c_attn.bias")},
        {b + "attn_output.weight", {C, C}, at(h + "attn.c_proj.weight"), true},
        {b + "attn_output.bias", {C}, at(h + "attn.c_proj.bias")},
        {b + "ffn_norm.weight", {C}, at(h + "ln_2.weight")},
        {b + "ffn_norm.bias", {C}, at(h + "ln_2.bias")},
        {b + "ffn_up.weight", {C, F}, at(h + "mlp.c_fc.weight"), true},
        {b + "ffn_up.bias", {F}, at(h + "mlp.c_fc.bias")},
        {b + "ffn_down.weight", {F, C}, at(h + "mlp.c_proj.weight"), true},
        {b + "ffn_down.bias", {C}, at(h + "mlp.c_proj.bias")},
    };
    t.insert(t.end(), block.begin(), block.end());
  }
  return t;
}

// vocab.json's tokens in id order, spelled as the file spells them (byte symbols: "Ġthe").
std::vector<std::string> tokens_in_id_order(const std::string& path, int64_t vocab_size) {
  std::ifstream in(path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ModelFileError(path + ": not JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw ModelFileError(path + ": expected a JSON object {\"token\": id, ...}");
  if (static_cast<int64_t>(j.size()) != vocab_size)
    throw ModelFileError(path + ": " + std::to_string(j.size()) + " tokens, but config.json says vocab_size " +
                         std::to_string(vocab_size) + "; GGUF needs one token per row of the embedding");
  std::vector<std::string> tokens(static_cast<size_t>(vocab_size));
  for (const auto& [token, id] : j.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size ||
        !tokens[id.get<size_t>()].empty())
      throw ModelFileError(path + ": token " + nlohmann::json(token).dump() + " has id " + id.dump() +
                           "; allowed: each id from 0 to " + std::to_string(vocab_size - 1) + " once");
    tokens[id.get<size_t>()] = token;
  }
  return tokens;
}

// merges.txt's pairs in rank order ("Ġ t"), without the "#version" line.
std::vector<std::string> merges_in_rank_order(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ModelFileError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::vector<std::string> merges;
  std::string line;
  for (bool first = true; std::getline(in, line); first = false) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || (first && line.rfind("#version", 0) == 0)) continue;
    merges.push_back(line);
  }
  return merges;
}

std::string header_of(const Gpt2Config& c, const ModelFiles& model, const std::vector<GgufTensor>& tensors,
                      const std::map<std::string, std::string>& sources) {
  GgufHeader kv;
  kv.kv_str("general.architecture", "gpt2");
  kv.kv_str("general.name", "gpt2");
  kv.kv_u32("general.file_type", kFileTypeAllF32);
  kv.kv_u32("general.alignment", static_cast<uint32_t>(kAlignment));
  kv.kv_u32("gpt2.context_length", static_cast<uint32_t>(c.n_positions));
  kv.kv_u32("gpt2.embedding_length", static_cast<uint32_t>(c.n_embd));
  kv.kv_u32("gpt2.feed_forward_length", static_cast<uint32_t>(c.mlp_width()));
  kv.kv_u32("gpt2.block_count", static_cast<uint32_t>(c.n_layer));
  kv.kv_u32("gpt2.attention.head_count", static_cast<uint32_t>(c.n_head));
  kv.kv_f32("gpt2.attention.layer_norm_epsilon", static_cast<float>(c.layer_norm_epsilon));
  kv.kv_str("tokenizer.ggml.model", "gpt2");
  kv.kv_str("tokenizer.ggml.pre", "gpt-2");
  const std::vector<std::string> tokens = tokens_in_id_order(model.vocab, c.vocab_size);
  std::vector<int32_t> types(tokens.size(), kTokenNormal);
  if (c.eos_token_id >= 0 && c.eos_token_id < c.vocab_size) types[static_cast<size_t>(c.eos_token_id)] = kTokenControl;
  if (c.bos_token_id >= 0 && c.bos_token_id < c.vocab_size) types[static_cast<size_t>(c.bos_token_id)] = kTokenControl;
  kv.kv_strings("tokenizer.ggml.tokens", tokens);
  kv.kv_i32s("tokenizer.ggml.token_type", types);
  kv.kv_strings("tokenizer.ggml.merges", merges_in_rank_order(model.merges));
  kv.kv_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(c.bos_token_id));
  kv.kv_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(c.eos_token_id));
  // Hugging Face's GPT-2 tokenizer adds nothing to a prompt; llama.cpp's tools would otherwise
  // put <|endoftext|> first.
  kv.kv_bool("tokenizer.ggml.add_bos_token", false);
  kv.kv_bool("tokenizer.ggml.add_eos_token", false);
  kv.kv_u32(kGgufExportRevisionKey, kGgufExportRevision);
  for (const auto& [name, sha] : sources) kv.kv_str(std::string(kGgufSourcePrefix) + name + ".sha256", sha);

  GgufHeader infos;
  uint64_t offset = 0;
  for (const GgufTensor& t : tensors) {
    infos.str(t.name);
    infos.u32(static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) infos.u64(static_cast<uint64_t>(d));
    infos.u32(kTensorF32);
    infos.u64(offset);
    offset = aligned(offset + t.bytes());
  }
  GgufHeader head;
  head.u32(0x46554747u);  // "GGUF" read as a little-endian uint32
  head.u32(kGgufVersion);
  head.u64(tensors.size());
  head.u64(kv.kv_count());
  std::string bytes = head.bytes() + kv.bytes() + infos.bytes();
  bytes.resize(aligned(bytes.size()), '\0');
  return bytes;
}

// The tensor's float32 values in the GGUF's order.
std::vector<float> gguf_values(const SafetensorsFile& file, const GgufTensor& t) {
  const TensorInfo& info = file.info(t.source);
  std::vector<float> v = file.to_f32(info);
  if (!t.transpose) return v;
  const size_t rows = static_cast<size_t>(info.shape[0]), cols = static_cast<size_t>(info.shape[1]);
  std::vector<float> out(v.size());
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) out[c * rows + r] = v[r * cols + c];
  return out;
}

void write_all(const std::string& tmp, const std::string& header, const SafetensorsFile& file,
               const std::vector<GgufTensor>& tensors) {
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw ModelFileError(tmp + ": cannot write (" + std::strerror(errno) + ")");
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  const std::string zeros(kAlignment, '\0');
  for (const GgufTensor& t : tensors) {
    const std::vector<float> v = gguf_values(file, t);
    out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    out.write(zeros.data(), static_cast<std::streamsize>(aligned(t.bytes()) - t.bytes()));
  }
  out.flush();
  if (!out) throw ModelFileError(tmp + ": write failed (disk full?)");
}

}  // namespace

GgufExport export_gguf(const ModelFiles& model, const std::string& out_path) {
  const Gpt2Config config = read_gpt2_config(model.config);
  const SafetensorsFile file = SafetensorsFile::open(model.weights);
  check_gpt2_tensors(file, config);
  GgufExport result;
  result.path = out_path;
  for (const std::string* path : {&model.config, &model.weights, &model.vocab, &model.merges})
    result.sources[std::filesystem::path(*path).filename().string()] = sha256_file(*path).sha256;
  const std::vector<GgufTensor> tensors = gguf_tensors(file, config);
  result.tensors = static_cast<int64_t>(tensors.size());
  const std::string header = header_of(config, model, tensors, result.sources);

  const std::filesystem::path target(out_path);
  if (target.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(target.parent_path(), ec);
    if (ec) throw ModelFileError(out_path + ": cannot create its directory (" + ec.message() + ")");
  }
  const std::string tmp = out_path + ".tmp." + std::to_string(::getpid());
  try {
    write_all(tmp, header, file, tensors);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw ModelFileError(out_path + ": cannot rename the temporary file into place (" + std::strerror(err) + ")");
  }
  const FileDigest d = sha256_file(out_path);
  result.sha256 = d.sha256;
  result.bytes = d.bytes;
  return result;
}

}  // namespace genrepro
