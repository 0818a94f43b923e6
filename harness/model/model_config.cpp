#include "model/model_config.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/bounded_read.hpp"
#include "util/errors.hpp"

namespace genrepro {

namespace {

// Upper bound for every size field. Real GPT-2 sizes are below 2^17; the bound keeps shape
// arithmetic (3 * n_embd, vocab_size * n_embd, ...) far from int64 overflow and makes a garbage
// config fail here rather than as a huge allocation later.
constexpr int64_t kMaxDimension = int64_t{1} << 24;

const char* kConfigFix = "; fix config.json (Hugging Face GPT-2 format) or regenerate it with `genrepro fixture --out DIR`";

std::string type_name(const nlohmann::json& v) { return v.type_name(); }

// A required positive integer field.
int64_t positive_int(const nlohmann::json& j, const std::string& path, const char* field) {
  if (!j.contains(field)) throw ModelFileError(path + ": missing field \"" + field + "\"" + kConfigFix);
  const auto& v = j.at(field);
  if (!v.is_number_integer())
    throw ModelFileError(path + ": field \"" + field + "\" is " + type_name(v) + " " + v.dump() +
                         ", expected a positive integer" + kConfigFix);
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(kMaxDimension))
    throw ModelFileError(path + ": field \"" + field + "\" is " + v.dump() + ", above the limit " +
                         std::to_string(kMaxDimension) + kConfigFix);
  const int64_t x = v.get<int64_t>();
  if (x <= 0)
    throw ModelFileError(path + ": field \"" + field + "\" is " + std::to_string(x) +
                         ", expected a positive integer" + kConfigFix);
  return x;
}

// An optional non-negative integer token id (null or absent keeps the default).
int64_t token_id(const nlohmann::json& j, const std::string& path, const char* field, int64_t fallback,
                 int64_t vocab_size) {
  if (!j.contains(field) || j.at(field).is_null()) {
    // GPT-2's default is only a token of a vocabulary that has it: vocab_size 1000 with no
    // eos_token_id would stop at an id the model cannot produce.
    if (fallback >= vocab_size)
      throw ModelFileError(path + ": field \"" + field + "\" is " + (j.contains(field) ? "null" : "missing") +
                           ", so GPT-2's " + std::to_string(fallback) + " would be used, which is not a token id in [0, " +
                           std::to_string(vocab_size) + ") (vocab_size); give \"" + field + "\" an id below " +
                           std::to_string(vocab_size));
    return fallback;
  }
  const auto& v = j.at(field);
  if (!v.is_number_integer())
    throw ModelFileError(path + ": field \"" + field + "\" is " + type_name(v) + " " + v.dump() +
                         ", expected a token id" + kConfigFix);
  const int64_t x = v.get<int64_t>();
  if (x < 0 || x >= vocab_size)
    throw ModelFileError(path + ": field \"" + field + "\" is " + std::to_string(x) + ", expected a token id in [0, " +
                         std::to_string(vocab_size) + ") (vocab_size)" + kConfigFix);
  return x;
}

}  // namespace

Gpt2Config parse_gpt2_config(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object())
    throw ModelFileError(path + ": is " + type_name(j) + ", expected a JSON object" + kConfigFix);
  if (j.contains("model_type") && !(j.at("model_type").is_string() && j.at("model_type") == "gpt2"))
    throw ModelFileError(path + ": field \"model_type\" is " + j.at("model_type").dump() +
                         ", expected \"gpt2\"; genrepro runs GPT-2 checkpoints only");

  Gpt2Config c;
  c.raw = j;
  c.vocab_size = positive_int(j, path, "vocab_size");
  c.n_positions = positive_int(j, path, "n_positions");
  c.n_embd = positive_int(j, path, "n_embd");
  c.n_layer = positive_int(j, path, "n_layer");
  c.n_head = positive_int(j, path, "n_head");
  if (c.n_embd % c.n_head != 0)
    throw ModelFileError(path + ": n_embd " + std::to_string(c.n_embd) + " is not divisible by n_head " +
                         std::to_string(c.n_head) + "; each attention head needs an equal share of the width" +
                         kConfigFix);

  if (j.contains("n_inner") && !j.at("n_inner").is_null()) c.n_inner = positive_int(j, path, "n_inner");

  if (j.contains("layer_norm_epsilon")) {
    const auto& v = j.at("layer_norm_epsilon");
    if (!v.is_number() || !(v.get<double>() > 0))
      throw ModelFileError(path + ": field \"layer_norm_epsilon\" is " + v.dump() + ", expected a positive number" +
                           kConfigFix);
    c.layer_norm_epsilon = v.get<double>();
  }

  if (j.contains("activation_function")) {
    const auto& v = j.at("activation_function");
    if (!v.is_string() || (v != "gelu_new" && v != "gelu"))
      throw ModelFileError(path + ": field \"activation_function\" is " + v.dump() +
                           ", allowed: \"gelu_new\", \"gelu\"" + kConfigFix);
    c.activation_function = v.get<std::string>();
  }

  if (j.contains("scale_attn_weights")) {
    const auto& v = j.at("scale_attn_weights");
    if (!v.is_boolean())
      throw ModelFileError(path + ": field \"scale_attn_weights\" is " + v.dump() + ", expected true or false" +
                           kConfigFix);
    c.scale_attn_weights = v.get<bool>();
  }

  // Variants of the attention the forward pass does not implement: refuse rather than compute
  // something else. (reorder_and_upcast_attn only changes float16 behaviour; float32 is unaffected.)
  if (j.contains("scale_attn_by_inverse_layer_idx") && !j.at("scale_attn_by_inverse_layer_idx").is_null() &&
      j.at("scale_attn_by_inverse_layer_idx") != false)
    throw ModelFileError(path + ": field \"scale_attn_by_inverse_layer_idx\" is " +
                         j.at("scale_attn_by_inverse_layer_idx").dump() +
                         ", allowed: false (GPT-2's attention; genrepro does not implement the scaled variant)");

  c.bos_token_id = token_id(j, path, "bos_token_id", c.bos_token_id, c.vocab_size);
  c.eos_token_id = token_id(j, path, "eos_token_id", c.eos_token_id, c.vocab_size);
  // Every other id the config names (pad_token_id, decoder_start_token_id, ...) is a token too:
  // one outside the vocabulary means the config is not this model's. null means none.
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const std::string suffix = "_token_id";
    if (key.size() <= suffix.size() || key.compare(key.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (key == "bos_token_id" || key == "eos_token_id" || it.value().is_null()) continue;
    token_id(j, path, key.c_str(), 0, c.vocab_size);
  }
  return c;
}

Gpt2Config read_gpt2_config(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    throw ModelFileError(path + ": config.json not found; a model directory needs it (make one with "
                         "`genrepro fixture --out DIR`)");
  if (std::filesystem::is_directory(status))
    throw ModelFileError(path + ": not a regular file (a directory?); expected the model's config.json");
  const BoundedRead read = read_bounded(path, kMaxModelConfigBytes, Expect::json_object);
  if (!read.ok()) throw ModelFileError(path + ": cannot read config.json: " + read.problem);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read.text);
  } catch (const nlohmann::json::exception& e) {
    std::string what = e.what();
    for (char& ch : what)
      if (ch == '\n') ch = ' ';
    throw ModelFileError(path + ": not valid JSON (" + what + ")" + kConfigFix);
  }
  return parse_gpt2_config(j, path);
}

}  // namespace genrepro
