// config.json: the real GPT-2 config parses to GPT-2 small's hyper-parameters, and each broken
// field gives a one-line ModelFileError naming the file and the field.
#include "model/model_config.hpp"

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "unit/model/model_test_util.hpp"

namespace genrepro {
namespace {

using test::ScratchDir;

// Hugging Face's gpt2 config.json, verbatim (huggingface.co/gpt2/blob/main/config.json).
const char* kHfGpt2Config = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 50257
})";

nlohmann::json base() { return nlohmann::json::parse(kHfGpt2Config); }

TEST(ModelConfig, ParsesHuggingFaceGpt2Config) {
  ScratchDir dir;
  test::write_bytes(dir / "config.json", kHfGpt2Config);
  const Gpt2Config c = read_gpt2_config(dir / "config.json");
  EXPECT_EQ(c.vocab_size, 50257);
  EXPECT_EQ(c.n_positions, 1024);
  EXPECT_EQ(c.n_embd, 768);
  EXPECT_EQ(c.n_layer, 12);
  EXPECT_EQ(c.n_head, 12);
  EXPECT_EQ(c.head_dim(), 64);
  EXPECT_EQ(c.mlp_width(), 3072);  // n_inner absent -> 4 * n_embd
  EXPECT_EQ(c.layer_norm_epsilon, 1e-5);
  EXPECT_EQ(c.activation_function, "gelu_new");
  EXPECT_EQ(c.eos_token_id, 50256);
  EXPECT_EQ(c.bos_token_id, 50256);
  EXPECT_TRUE(c.scale_attn_weights);
  EXPECT_EQ(c.raw.at("n_ctx"), 1024);  // kept as read, for the evidence
}

TEST(ModelConfig, OptionalFields) {
  nlohmann::json j = base();
  j["n_inner"] = nullptr;
  EXPECT_EQ(parse_gpt2_config(j, "c.json").mlp_width(), 3072);
  j["n_inner"] = 1000;
  EXPECT_EQ(parse_gpt2_config(j, "c.json").mlp_width(), 1000);
  j["eos_token_id"] = 7;
  j["activation_function"] = "gelu";
  j["layer_norm_epsilon"] = 1e-6;
  const Gpt2Config c = parse_gpt2_config(j, "c.json");
  EXPECT_EQ(c.eos_token_id, 7);
  EXPECT_EQ(c.activation_function, "gelu");
  EXPECT_EQ(c.layer_norm_epsilon, 1e-6);
}

// Each case: a modification of the real config and the words the error must contain.
struct BadField {
  const char* what;
  std::function<void(nlohmann::json&)> modify;
  std::string expected;
};

TEST(ModelConfig, EachBadFieldIsNamed) {
  const std::vector<BadField> cases = {
      {"missing", [](nlohmann::json& j) { j.erase("n_embd"); }, "c.json: missing field \"n_embd\""},
      {"wrong type", [](nlohmann::json& j) { j["n_head"] = "12"; },
       "c.json: field \"n_head\" is string \"12\", expected a positive integer"},
      {"float size", [](nlohmann::json& j) { j["n_layer"] = 12.5; },
       "field \"n_layer\" is number 12.5, expected a positive integer"},
      {"zero", [](nlohmann::json& j) { j["n_head"] = 0; }, "field \"n_head\" is 0, expected a positive integer"},
      {"negative", [](nlohmann::json& j) { j["vocab_size"] = -5; },
       "field \"vocab_size\" is -5, expected a positive integer"},
      {"heads do not divide",
       [](nlohmann::json& j) {
         j["n_embd"] = 64;
         j["n_head"] = 5;
       },
       "c.json: n_embd 64 is not divisible by n_head 5"},
      {"activation", [](nlohmann::json& j) { j["activation_function"] = "relu"; },
       "field \"activation_function\" is \"relu\", allowed: \"gelu_new\", \"gelu\""},
      {"epsilon", [](nlohmann::json& j) { j["layer_norm_epsilon"] = -1; },
       "field \"layer_norm_epsilon\" is -1, expected a positive number"},
      {"eos range", [](nlohmann::json& j) { j["eos_token_id"] = 50257; },
       "field \"eos_token_id\" is 50257, expected a token id in [0, 50257)"},
      {"model type", [](nlohmann::json& j) { j["model_type"] = "llama"; },
       "field \"model_type\" is \"llama\", expected \"gpt2\""},
      {"not an object", [](nlohmann::json& j) { j = nlohmann::json::array({1, 2}); }, "c.json: is array"},
      {"n_inner zero", [](nlohmann::json& j) { j["n_inner"] = 0; }, "field \"n_inner\" is 0"},
      {"huge size", [](nlohmann::json& j) { j["n_embd"] = 1000000000000000000ull; },
       "field \"n_embd\" is 1000000000000000000, above the limit 16777216"},
      {"unsupported attention variant", [](nlohmann::json& j) { j["scale_attn_by_inverse_layer_idx"] = true; },
       "field \"scale_attn_by_inverse_layer_idx\" is true, allowed: false"},
      {"scale flag", [](nlohmann::json& j) { j["scale_attn_weights"] = "yes"; },
       "field \"scale_attn_weights\" is \"yes\", expected true or false"},
  };
  for (const BadField& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json j = base();
    c.modify(j);
    EXPECT_THROW_MSG(parse_gpt2_config(j, "c.json"), ModelFileError, c.expected);
  }
}

TEST(ModelConfig, FileProblems) {
  ScratchDir dir;
  EXPECT_THROW_MSG(read_gpt2_config(dir / "config.json"), ModelFileError,
                   dir / "config.json" + ": config.json not found");
  EXPECT_THROW_MSG(read_gpt2_config(dir.path().string()), ModelFileError, "not a regular file (a directory?)");
  test::write_bytes(dir / "broken.json", "{\"n_embd\": 64,\n  oops");
  EXPECT_THROW_MSG(read_gpt2_config(dir / "broken.json"), ModelFileError, dir / "broken.json" + ": not valid JSON");
  test::write_bytes(dir / "empty.json", "");
  EXPECT_THROW_MSG(read_gpt2_config(dir / "empty.json"), ModelFileError, "not valid JSON");
  test::write_bytes(dir / "big.json", std::string((1 << 20) + 1, ' '));
  EXPECT_THROW_MSG(read_gpt2_config(dir / "big.json"), ModelFileError, "cannot read config.json: holds more than the 1048576 bytes allowed");
}

}  // namespace
}  // namespace genrepro
