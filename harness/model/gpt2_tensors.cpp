#include "model/gpt2_tensors.hpp"

#include <cctype>

#include "util/errors.hpp"

namespace genrepro {

namespace {

// Some conversions (e.g. from GPT2Model rather than GPT2LMHeadModel) keep the module prefix.
constexpr const char* kTransformerPrefix = "transformer.";

}  // namespace

std::vector<ExpectedTensor> expected_gpt2_tensors(const Gpt2Config& c) {
  const int64_t C = c.n_embd, V = c.vocab_size, P = c.n_positions, F = c.mlp_width();
  const std::string emb = "n_embd " + std::to_string(C);
  const std::string mlp = emb + ", mlp width " + std::to_string(F) + (c.n_inner > 0 ? " (n_inner)" : " (4 * n_embd)");
  std::vector<ExpectedTensor> out = {
      {"wte.weight", {V, C}, "vocab_size " + std::to_string(V) + ", " + emb},
      {"wpe.weight", {P, C}, "n_positions " + std::to_string(P) + ", " + emb},
  };
  for (int64_t i = 0; i < c.n_layer; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    const std::vector<ExpectedTensor> block = {
        {h + "ln_1.weight", {C}, emb},
        {h + "ln_1.bias", {C}, emb},
        {h + "attn.c_attn.weight", {C, 3 * C}, emb},
        {h + "attn.c_attn.bias", {3 * C}, emb},
        {h + "attn.c_proj.weight", {C, C}, emb},
        {h + "attn.c_proj.bias", {C}, emb},
        {h + "ln_2.weight", {C}, emb},
        {h + "ln_2.bias", {C}, emb},
        {h + "mlp.c_fc.weight", {C, F}, mlp},
        {h + "mlp.c_fc.bias", {F}, mlp},
        {h + "mlp.c_proj.weight", {F, C}, mlp},
        {h + "mlp.c_proj.bias", {C}, emb},
    };
    out.insert(out.end(), block.begin(), block.end());
  }
  out.push_back({"ln_f.weight", {C}, emb});
  out.push_back({"ln_f.bias", {C}, emb});
  return out;
}

bool is_skipped_gpt2_buffer(const std::string& name) {
  // Matches [transformer.]h.<digits>.attn.bias and [transformer.]h.<digits>.attn.masked_bias.
  std::string rest = name;
  const std::string prefix = kTransformerPrefix;
  if (rest.compare(0, prefix.size(), prefix) == 0) rest.erase(0, prefix.size());
  if (rest.compare(0, 2, "h.") != 0) return false;
  size_t i = 2;
  while (i < rest.size() && std::isdigit(static_cast<unsigned char>(rest[i]))) ++i;
  if (i == 2) return false;
  const std::string tail = rest.substr(i);
  return tail == ".attn.bias" || tail == ".attn.masked_bias";
}

std::string find_tensor_name(const SafetensorsFile& file, const std::string& hf_name) {
  if (file.has(hf_name)) return hf_name;
  const std::string prefixed = kTransformerPrefix + hf_name;
  if (file.has(prefixed)) return prefixed;
  throw ModelFileError(file.path() + ": missing tensor '" + hf_name + "' (also looked for '" + prefixed +
                       "'); the file holds " + std::to_string(file.tensors().size()) +
                       " tensors and is not a complete GPT-2 checkpoint; re-download it or regenerate it with "
                       "`genrepro fixture --out DIR`");
}

void check_gpt2_tensors(const SafetensorsFile& file, const Gpt2Config& config) {
  for (const ExpectedTensor& want : expected_gpt2_tensors(config)) {
    const std::string name = find_tensor_name(file, want.name);
    const TensorInfo& got = file.info(name);
    if (got.shape != want.shape)
      throw ModelFileError(file.path() + ": tensor '" + name + "' has shape " + shape_text(got.shape) +
                           ", expected " + shape_text(want.shape) + " from config.json (" + want.because +
                           "); config.json and model.safetensors belong to different models");
  }
}

}  // namespace genrepro
