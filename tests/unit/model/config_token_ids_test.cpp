// Every token id config.json names is checked against its vocab_size before work
// starts, the default EOS included: a config of vocab_size 1000 with "eos_token_id": null would
// have stopped at 50256, an id the model cannot produce. Each case is one edit of GPT-2's config.
#include "model/model_config.hpp"

#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "unit/model/model_test_util.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

nlohmann::json gpt2_config() {
  return nlohmann::json{{"activation_function", "gelu_new"}, {"bos_token_id", 50256}, {"eos_token_id", 50256},
                        {"layer_norm_epsilon", 1e-05},       {"model_type", "gpt2"}, {"n_ctx", 1024},
                        {"n_embd", 768},                     {"n_head", 12},         {"n_layer", 12},
                        {"n_positions", 1024},               {"vocab_size", 50257}};
}

TEST(ConfigTokenIds, TheUneditedConfigParses) {
  const Gpt2Config c = parse_gpt2_config(gpt2_config(), "c.json");
  EXPECT_EQ(c.eos_token_id, 50256);
  nlohmann::json j = gpt2_config();
  j["pad_token_id"] = nullptr;  // none
  j["eos_token_id"] = nullptr;  // GPT-2's 50256, in range here
  EXPECT_EQ(parse_gpt2_config(j, "c.json").eos_token_id, 50256);
}

TEST(ConfigTokenIds, EveryIdIsInTheVocabulary) {
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"eos null, small vocab",
       [](nlohmann::json& j) {
         j["vocab_size"] = 1000;
         j["bos_token_id"] = 999;
         j["eos_token_id"] = nullptr;
       },
       "c.json: field \"eos_token_id\" is null, so GPT-2's 50256 would be used, which is not a token id in [0, 1000) "
       "(vocab_size); give \"eos_token_id\" an id below 1000"},
      {"eos missing, small vocab",
       [](nlohmann::json& j) {
         j["vocab_size"] = 1000;
         j["bos_token_id"] = 999;
         j.erase("eos_token_id");
       },
       "c.json: field \"eos_token_id\" is missing, so GPT-2's 50256 would be used"},
      {"bos missing, small vocab",
       [](nlohmann::json& j) {
         j["vocab_size"] = 1000;
         j["eos_token_id"] = 999;
         j.erase("bos_token_id");
       },
       "c.json: field \"bos_token_id\" is missing, so GPT-2's 50256 would be used"},
      {"pad outside", [](nlohmann::json& j) { j["pad_token_id"] = 50257; },
       "c.json: field \"pad_token_id\" is 50257, expected a token id in [0, 50257) (vocab_size)"},
      {"decoder start negative", [](nlohmann::json& j) { j["decoder_start_token_id"] = -1; },
       "c.json: field \"decoder_start_token_id\" is -1, expected a token id in [0, 50257) (vocab_size)"},
      {"sep not an integer", [](nlohmann::json& j) { j["sep_token_id"] = "x"; },
       "c.json: field \"sep_token_id\" is string \"x\", expected a token id"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json j = gpt2_config();
    c.edit(j);
    EXPECT_THROW_MSG(parse_gpt2_config(j, "c.json"), ModelFileError, c.expected);
  }
}

}  // namespace
}  // namespace genrepro
