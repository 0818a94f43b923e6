// Broken model directories through the CLI: each missing, truncated or corrupt model
// file gives ONE line on stderr naming the file and the problem, and exit code 2 - never an
// internal error (exit 3). tests/cli/scripts/make_broken_models.py copies the tiny fixture once
// per case and breaks exactly one thing in the copy (ctest fixture broken_models); the case names
// are its directory names. Regexes follow "genrepro: error: ".
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"
#include "support/env_guard.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

struct BrokenModel {
  std::string name;   // the directory under the broken-models fixture
  std::string regex;  // what follows "^genrepro: error: "
};

const std::vector<std::string> kGenerate = {"generate", "--prompt", "the river bank was", "--max-new-tokens", "3"};

std::vector<std::string> generate_with(std::vector<std::string> extra) {
  std::vector<std::string> args = kGenerate;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// `genrepro generate --model <broken copy>`.
const std::vector<BrokenModel> kViaModelFlag = {
    // model.safetensors: the 8-byte header length and the JSON header.
    {"header_length_past_end",
     R"re(.*/header_length_past_end/model\.safetensors: header length [0-9]+ exceeds the [0-9]+ bytes after it .*the file is truncated or not safetensors)re"},
    {"header_length_huge",
     R"re(.*/header_length_huge/model\.safetensors: header length 9223372036854775808 exceeds the [0-9]+ bytes after it)re"},
    {"header_not_json", R"re(.*/header_not_json/model\.safetensors: header is not valid JSON \(.*parse error.*\))re"},
    {"header_not_object", R"re(.*/header_not_object/model\.safetensors: header is JSON but not an object)re"},
    // model.safetensors: tensor entries.
    {"offsets_past_end",
     R"re(.*/offsets_past_end/model\.safetensors: tensor '[^']+' has data_offsets \[[0-9]+, [0-9]+\] past the end of the [0-9]+-byte data section)re"},
    {"offsets_overlap",
     R"re(.*/offsets_overlap/model\.safetensors: tensors 'h\.0\.ln_1\.weight' .[0-9]+, [0-9]+. and 'h\.0\.ln_1\.bias' .[0-9]+, [0-9]+. overlap)re"},
    {"dtype_i4", R"re(.*/dtype_i4/model\.safetensors: tensor 'h\.0\.attn\.c_proj\.bias' has dtype I4, allowed: F32, F16, BF16)re"},
    {"dtype_f64", R"re(.*/dtype_f64/model\.safetensors: tensor 'h\.0\.attn\.c_proj\.bias' has dtype F64, allowed: F32, F16, BF16)re"},
    {"tensor_missing", R"re(.*/tensor_missing/model\.safetensors: missing tensor 'h\.1\.mlp\.c_fc\.bias')re"},
    // model.safetensors against config.json.
    {"wte_shape_vs_config",
     R"re(.*/wte_shape_vs_config/model\.safetensors: tensor 'wte\.weight' has shape \[50257, 64\], expected \[50257, 96\] from config\.json \(vocab_size 50257, n_embd 96\))re"},
    {"wpe_shape_swapped",
     R"re(.*/wpe_shape_swapped/model\.safetensors: tensor 'wpe\.weight' has shape \[64, 128\], expected \[128, 64\] from config\.json \(n_positions 128, n_embd 64\))re"},
    // model.safetensors as a whole.
    {"weights_truncated",
     R"re(.*/weights_truncated/model\.safetensors: tensor '[^']+' has data_offsets .* past the end of the [0-9]+-byte data section.*truncated)re"},
    {"weights_empty",
     R"re(.*/weights_empty/model\.safetensors: file is 0 bytes, too short for the 8-byte safetensors header length)re"},
    {"weights_directory",
     R"re(model directory .*/weights_directory \(from --model\): missing model\.safetensors \[model\.safetensors is a directory\])re"},
    {"weights_missing", R"re(model directory .*/weights_missing \(from --model\): missing model\.safetensors. a model directory holds)re"},
    {"pytorch_bin_only",
     R"re(model directory .*/pytorch_bin_only \(from --model\): missing model\.safetensors \(pytorch_model\.bin is not read: genrepro loads only safetensors\))re"},
    // config.json.
    {"heads_do_not_divide", R"re(.*/heads_do_not_divide/config\.json: n_embd 64 is not divisible by n_head 5)re"},
    {"config_missing", R"re(model directory .*/config_missing \(from --model\): missing config\.json. a model directory holds)re"},
    {"config_not_json", R"re(.*/config_not_json/config\.json: not valid JSON \(.*parse error at line 2, column 1)re"},
    {"config_n_layer_string",
     R"re(.*/config_n_layer_string/config\.json: field "n_layer" is string "two", expected a positive integer)re"},
    {"config_directory",
     R"re(model directory .*/config_directory \(from --model\): missing config\.json \[config\.json is a directory\])re"},
    // The tokenizer files.
    {"vocab_missing", R"re(model directory .*/vocab_missing \(from --model\): missing vocab\.json \(or encoder\.json\))re"},
    {"merges_missing", R"re(model directory .*/merges_missing \(from --model\): missing merges\.txt \(or vocab\.bpe\))re"},
    {"vocab_garbage", R"re(vocab file '.*/vocab_garbage/vocab\.json' is not valid JSON \(error at byte [0-9]+\))re"},
    {"merges_garbage",
     R"re(merges file '.*/merges_garbage/merges\.txt': line 2 "this line has three tokens" is not two tokens separated by one space)re"},
    // The model against its tokenizer, and config.json's token ids against vocab_size.
    {"vocab_1000",
     R"re(.*/vocab_1000/config\.json: vocab_size = 1000 is less than the 50257 ids of .*/vocab_1000/vocab\.json \(largest id 50256\); allowed: at least 50257)re"},
    {"eos_null_vocab_1000",
     R"re(.*/eos_null_vocab_1000/config\.json: field "eos_token_id" is null, so GPT-2's 50256 would be used, which is not a token id in \[0, 1000\))re"},
    {"pad_token_id_outside",
     R"re(.*/pad_token_id_outside/config\.json: field "pad_token_id" is 50257, expected a token id in \[0, 50257\) \(vocab_size\))re"},
};

// The same errors when the broken directory comes from $GENREPRO_MODEL rather than --model.
const std::vector<BrokenModel> kViaEnvironment = {
    {"offsets_overlap", R"re(.*/offsets_overlap/model\.safetensors: tensors 'h\.0\.ln_1\.weight' .* and 'h\.0\.ln_1\.bias' .* overlap)re"},
    {"heads_do_not_divide", R"re(.*/heads_do_not_divide/config\.json: n_embd 64 is not divisible by n_head 5)re"},
    {"vocab_missing", R"re(model directory .*/vocab_missing \(from \$GENREPRO_MODEL\): missing vocab\.json)re"},
    {"pytorch_bin_only",
     R"re(model directory .*/pytorch_bin_only \(from \$GENREPRO_MODEL\): missing model\.safetensors \(pytorch_model\.bin is not read: genrepro loads only safetensors\))re"},
};

// `genrepro run` on a broken model: the same one line and exit 2, and an existing --out file
// stays byte-identical with nothing left beside it.
const std::vector<BrokenModel> kViaRun = {
    {"weights_truncated", R"re(.*/weights_truncated/model\.safetensors: tensor '[^']+' has data_offsets .* past the end)re"},
    {"header_length_huge", R"re(.*/header_length_huge/model\.safetensors: header length 9223372036854775808 exceeds)re"},
    {"wte_shape_vs_config",
     R"re(.*/wte_shape_vs_config/model\.safetensors: tensor 'wte\.weight' has shape \[50257, 64\], expected \[50257, 96\])re"},
    {"config_n_layer_string", R"re(.*/config_n_layer_string/config\.json: field "n_layer" is string "two")re"},
    {"vocab_garbage", R"re(vocab file '.*/vocab_garbage/vocab\.json' is not valid JSON)re"},
};

// Cases tested on their own below: NaN weights (caught at the first step, not at load), and a
// padded vocabulary, which is not an error (vocab_agreement_test.cpp).
const std::vector<std::string> kInternalErrorCases = {"weights_nan", "vocab_padded_50304"};

std::string error_line(const BrokenModel& m) { return "^genrepro: error: " + m.regex; }

// A hang (or a read of a bogus length) is ctest's TIMEOUT to catch; these cases assert behaviour only.

class ModelFlag : public ::testing::TestWithParam<BrokenModel> {};
TEST_P(ModelFlag, OneLineExit2) {
  expect_case({GetParam().name, generate_with({"--model", broken_model(GetParam().name)}), 2, "", error_line(GetParam()),
               Stderr::one_line});
}
INSTANTIATE_TEST_SUITE_P(BrokenModel, ModelFlag, ::testing::ValuesIn(kViaModelFlag), CaseName{});

class ModelFromEnvironment : public ::testing::TestWithParam<BrokenModel> {};
TEST_P(ModelFromEnvironment, OneLineExit2) {
  const EnvGuard model("GENREPRO_MODEL", broken_model(GetParam().name));
  expect_case({GetParam().name, kGenerate, 2, "", error_line(GetParam()), Stderr::one_line});
}
INSTANTIATE_TEST_SUITE_P(BrokenModel, ModelFromEnvironment, ::testing::ValuesIn(kViaEnvironment), CaseName{});

class ModelInRun : public ::testing::TestWithParam<BrokenModel> {};
TEST_P(ModelInRun, OneLineExit2OutUntouched) {
  expect_bad_input_keeps_out({"run", source_path("experiments/article/greedy.json"), "--model", broken_model(GetParam().name)},
                             error_line(GetParam()));
}
INSTANTIATE_TEST_SUITE_P(BrokenModel, ModelInRun, ::testing::ValuesIn(kViaRun), CaseName{});

// NaN weights pass every load check; the distribution they give is stopped before the draw
// (the chain's draw, sampling/draws.hpp), so torch::multinomial never sees it: bad input,
// exit 2, one line after the model note naming the step (no input may end in exit 3).
TEST(InternalError, NanWeightsStopBeforeTheDrawExit2) {
  // Every mode: sampled, greedy (argmax of NaN would print id 0 three times), first prediction.
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--max-new-tokens", "3", "--seed", "1"},
        std::vector<std::string>{"--max-new-tokens", "3", "--greedy"},
        std::vector<std::string>{"--max-new-tokens", "0", "--greedy"}}) {
    std::vector<std::string> args = {"generate", "--prompt", "the river bank was", "--model", broken_model("weights_nan")};
    args.insert(args.end(), mode.begin(), mode.end());
    expect_case({"weights_nan", args, 2, "",
                 R"re(^model: [^\n]*\npath: [^\n]*\ngenrepro: error: step 0: the model's logits hold NaN \(token id 0\); [^\n]*\n$)re"});
  }
}

// run stops every mode on NaN logits with exit 2, its last stderr line naming the run and the
// step, and the existing --out left as it was (notes about the model may come before that line).
TEST(InternalError, NanWeightsStopEveryRunModeNamingTheRun) {
  for (const char* experiment : {"greedy", "first_prediction_top5", "temperature"}) {
    ScratchDir dir("nan-run");
    const std::string sentinel = "{}\n";
    const std::string out = dir.write("evidence.json", sentinel);
    const std::vector<std::string> args = {"run", source_path(std::string("experiments/article/") + experiment + ".json"),
                                           "--model", broken_model("weights_nan"), "--out", out};
    const CliResult r = genrepro(args);
    SCOPED_TRACE(describe(args, r));
    EXPECT_EQ(r.exit, 2);
    EXPECT_TRUE(Searches(std::string(R"re(\ngenrepro: error: run )re") + experiment +
                             R"re(/p0/[^ \n]+: step 0: the model's logits hold NaN \(token id 0\); [^\n]+\n$)re",
                         "\n" + r.err));
    EXPECT_EQ(read_bytes(out), sentinel);
  }
}

// The control for the test above: libtorch's own message is several lines (the backtrace), so the
// one line seen there is the CLI's doing.
TEST(InternalError, LibtorchMessagesAreMultiLine) {
  try {
    TORCH_CHECK(false, "probability tensor contains either `inf`, `nan` or element < 0");
    FAIL() << "TORCH_CHECK(false) did not throw";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
}

// The table above names every case the fixture makes: a case added to make_broken_models.py
// without a test here (or the other way round) fails.
TEST(BrokenModelFixture, EveryCaseHasATest) {
  std::vector<std::string> made;
  for (const auto& e : std::filesystem::directory_iterator(broken_model("")))
    if (e.is_directory()) made.push_back(e.path().filename().string());
  std::vector<std::string> tested;
  for (const BrokenModel& m : kViaModelFlag) tested.push_back(m.name);
  for (const std::string& extra : kInternalErrorCases) tested.push_back(extra);
  std::sort(made.begin(), made.end());
  std::sort(tested.begin(), tested.end());
  EXPECT_EQ(made, tested);
}

}  // namespace
}  // namespace genrepro::test
