// Tokens given as text in the frameworks' list controls: what parsing keeps, how each
// framework's rule encodes a text (against independent encoders), where the ids go, what the
// evidence records and reads back, and every refused input with its file, path, value and rule.
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "plan/run_plan.hpp"
#include "params/experiment_spec.hpp"
#include "params/framework_params.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

const Gpt2Tokenizer& tokenizer() {
  static const Gpt2Tokenizer t = Gpt2Tokenizer::from_directory(GENREPRO_TEST_TOKENIZER_DIR);
  return t;
}

std::string with_run(const std::string& run) {
  return R"({"name": "x", "prompts": ["the river bank was"], "max_new_tokens": 4, "runs": [)" + run + "]}";
}

std::string error_of(const std::string& text) {
  try {
    parse_experiment(text, "experiments/x.json");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

// The run of a one-entry experiment, its texts encoded as plan_runs encodes them.
ExpandedRun encoded_run(const std::string& run) {
  ExpandedRun r = parse_experiment(with_run(run), "x.json").runs.at(0);
  const auto refused = encode_control_texts(r.params, tokenizer());
  EXPECT_FALSE(refused) << refused->allowed;
  return r;
}

// tests/data/frameworks/control-text-ids.json: made by make_control_text_ids.mjs beside it with
// gpt-tokenizer (Hugging Face's rule) and gpt-3-encoder (llama.cpp's), neither of them genrepro's.
json reference_ids() {
  std::ifstream in(std::string(GENREPRO_SOURCE_DIR) + "/tests/data/frameworks/control-text-ids.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

TEST(ControlTextIds, EachFrameworksRuleGivesTheIndependentEncodersIds) {
  const json cases = reference_ids()["cases"];
  ASSERT_GE(cases.size(), 16u);
  for (const json& c : cases) {
    const std::string text = c["text"].get<std::string>();
    // Hugging Face's rule through a bad_words_ids text (a whole sequence), llama.cpp's through a
    // logit_bias text (one entry per token).
    const ExpandedRun hf = encoded_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": [)" + json(text).dump() + "]}");
    EXPECT_EQ(hf.params.sampling.controls.bad_words_ids.at(0), c["hf"].get<std::vector<int64_t>>()) << json(text).dump();
    const ExpandedRun llama =
        encoded_run(R"({"mode": "greedy", "framework": "llama.cpp", "logit_bias": [[)" + json(text).dump() + ", -1.5]]}");
    std::vector<int64_t> biased;
    for (const TokenBias& b : llama.params.sampling.controls.logit_bias) {
      biased.push_back(b.token);
      EXPECT_EQ(b.bias, -1.5);
    }
    EXPECT_EQ(biased, c["llama.cpp"].get<std::vector<int64_t>>()) << json(text).dump();
  }
}

TEST(ControlTextIds, ThePromptsRuleIsUnchangedAndTheOptionsAreTheFrameworks) {
  EncodeOptions hf;
  hf.prefix_space = true;
  EncodeOptions llama;
  llama.special_tokens = false;
  EXPECT_EQ(tokenizer().encode("a<|endoftext|>b"), (std::vector<int64_t>{64, 50256, 65}));
  EXPECT_EQ(tokenizer().encode("a<|endoftext|>b", EncodeOptions{}), (std::vector<int64_t>{64, 50256, 65}));
  EXPECT_EQ(tokenizer().encode("a<|endoftext|>b", hf), (std::vector<int64_t>{257, 50256, 275}));
  EXPECT_EQ(tokenizer().encode("<|endoftext|>", hf), (std::vector<int64_t>{50256}));  // no part, no space
  EXPECT_EQ(tokenizer().encode("<|endoftext|>", llama), (std::vector<int64_t>{27, 91, 437, 1659, 5239, 91, 29}));
  EXPECT_EQ(control_text_rule(Framework::hf).prefix_space, true);
  EXPECT_EQ(control_text_rule(Framework::hf).special_tokens, true);
  EXPECT_EQ(control_text_rule(Framework::llama_cpp).prefix_space, false);
  EXPECT_EQ(control_text_rule(Framework::llama_cpp).special_tokens, false);
}

TEST(ControlTexts, ParsingKeepsTheTextsAndTheRunIdHashesThemAsWritten) {
  const std::string run = R"({"mode": "greedy", "framework": "hf", "bad_words_ids": ["the cat", [7850, 3331]],
                               "suppress_tokens": [50256, " the"], "sequence_bias": [["the cat", -2.5], [[7850], 1.0]]})";
  const ExpandedRun parsed = parse_experiment(with_run(run), "x.json").runs.at(0);
  const FrameworkControls& c = parsed.params.sampling.controls;
  ASSERT_EQ(c.texts.size(), 3u);  // control_keys() order: bad_words_ids, sequence_bias, suppress_tokens
  EXPECT_EQ(c.texts[0].control, "bad_words_ids");
  EXPECT_EQ(c.texts[1].control, "sequence_bias");
  EXPECT_EQ(c.texts[2].control, "suppress_tokens");
  EXPECT_EQ(c.texts[2].entry, 1);
  EXPECT_TRUE(c.texts[0].ids.empty());
  const ordered_json written = params_as_written_json(parsed.params);
  EXPECT_EQ(written["bad_words_ids"].dump(), R"(["the cat",[7850,3331]])");
  EXPECT_EQ(written["suppress_tokens"].dump(), R"([50256," the"])");
  EXPECT_EQ(written["sequence_bias"].dump(), R"([["the cat",-2.5],[[7850],1.0]])");
  EXPECT_FALSE(written.contains("control_texts"));

  ExpandedRun encoded = parsed;
  ASSERT_FALSE(encode_control_texts(encoded.params, tokenizer()));
  const ordered_json recorded = params_to_json(encoded.params);
  EXPECT_EQ(recorded["bad_words_ids"].dump(), "[[262,3797],[7850,3331]]");
  EXPECT_EQ(recorded["suppress_tokens"].dump(), "[50256,262]");
  EXPECT_EQ(recorded["sequence_bias"].dump(), "[[[262,3797],-2.5],[[7850],1.0]]");
  EXPECT_EQ(recorded["control_texts"].dump(),
            R"([{"control":"bad_words_ids","entry":0,"text":"the cat","ids":[262,3797]},)"
            R"({"control":"sequence_bias","entry":0,"text":"the cat","ids":[262,3797]},)"
            R"({"control":"suppress_tokens","entry":1,"text":" the","ids":[262]}])");
  // Encoding changes no id: the id hashes the texts (like the prompt's), so merge, bless and the
  // reader, which re-expand specs without a tokenizer, find the same runs.
  EXPECT_EQ(params_as_written_json(encoded.params), written);
  EXPECT_EQ(run_id(encoded.experiment, 0, encoded.prompt, encoded.params), parsed.id);

  // Evidence reads back what it wrote, texts and all.
  const RunParams back = params_from_json(json(recorded), "runs[0].params");
  EXPECT_EQ(params_to_json(back), recorded);
  EXPECT_EQ(run_id(encoded.experiment, 0, encoded.prompt, back), parsed.id);
}

TEST(ControlTexts, ARunGivenOnlyIdsWritesWhatItAlwaysWrote) {
  const ExpandedRun r = encoded_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": [[262, 3797]], "suppress_tokens": [262]})");
  EXPECT_TRUE(r.params.sampling.controls.texts.empty());
  EXPECT_FALSE(params_to_json(r.params).contains("control_texts"));
  EXPECT_EQ(params_as_written_json(r.params), params_to_json(r.params));
  // Same ids, given as text: another run id (the file says something else), the same lists.
  const ExpandedRun t = encoded_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": ["the cat"], "suppress_tokens": ["the"]})");
  EXPECT_NE(t.id, r.id);
  EXPECT_EQ(t.params.sampling.controls.bad_words_ids, r.params.sampling.controls.bad_words_ids);
  EXPECT_EQ(t.params.sampling.controls.suppress_tokens, r.params.sampling.controls.suppress_tokens);
}

TEST(ControlTexts, ALogitBiasTextBiasesEveryTokenAndLaterEntriesMoveUp) {
  const ExpandedRun r = encoded_run(
      R"({"mode": "sample", "seed": 1, "framework": "llama.cpp", "logit_bias": [["Hello world", -0.5], [50256, false], ["!", 2]]})");
  const FrameworkControls& c = r.params.sampling.controls;
  EXPECT_EQ(control_to_json(c, "logit_bias").dump(), R"([[15496,-0.5],[995,-0.5],[50256,"-Infinity"],[0,2.0]])");
  ASSERT_EQ(c.texts.size(), 2u);
  EXPECT_EQ(c.texts[0].entry, 0);
  EXPECT_EQ(c.texts[1].entry, 3);  // written at [2], after "Hello world"'s two entries
  EXPECT_EQ(control_as_written(c, "logit_bias").dump(), R"([["Hello world",-0.5],[50256,"-Infinity"],["!",2.0]])");
  EXPECT_FALSE(control_texts_problem(c, Framework::llama_cpp));
}

TEST(ControlTextErrors, EveryBadTextNamesTheFilePathValueAndWhatIsAllowed) {
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": ["the cat", ""]})")),
            "experiments/x.json: runs[0].bad_words_ids[1] = \"\" is not allowed; allowed: a non-empty text (the tokenizer encodes "
            "it by the framework's rule) or a list of token ids");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "suppress_tokens": [""]})")),
            "experiments/x.json: runs[0].suppress_tokens[0] = \"\" is not allowed; allowed: a non-empty text (the tokenizer encodes "
            "it by the framework's rule) or a token id");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "sequence_bias": [[[7850], 1.0], ["", 1.0]]})")),
            "experiments/x.json: runs[0].sequence_bias[1][0] = \"\" is not allowed; allowed: a non-empty text (the tokenizer "
            "encodes it by the framework's rule) or a list of token ids");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "llama.cpp", "logit_bias": [["", false]]})")),
            "experiments/x.json: runs[0].logit_bias[0][0] = \"\" is not allowed; allowed: a non-empty text (the tokenizer encodes "
            "it by the framework's rule) or a token id");
  // Neither a string nor an id.
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "suppress_tokens": [1.5]})")),
            "experiments/x.json: runs[0].suppress_tokens = [1.5] is not allowed; allowed: a list of token ids or texts of one "
            "token each, e.g. [50256, \" the\"]");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": [null]})")),
            "experiments/x.json: runs[0].bad_words_ids = [null] is not allowed; allowed: a list of non-empty lists of token ids "
            "or texts (a text is one sequence), e.g. [[1169], [7850, 3331], \"the cat\"]");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": [["the", "cat"]]})")),
            "experiments/x.json: runs[0].bad_words_ids = [[\"the\",\"cat\"]] is not allowed; allowed: a list of non-empty lists of "
            "token ids or texts (a text is one sequence), e.g. [[1169], [7850, 3331], \"the cat\"]");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "llama.cpp", "logit_bias": [[[15496], -1]]})")),
            "experiments/x.json: runs[0].logit_bias = [[[15496],-1]] is not allowed; allowed: a list of [token id or text, bias] "
            "pairs (a text biases every token it encodes to), bias a finite number or false / \"-Infinity\" (never), e.g. "
            "[[50256, false], [\"Hello\", -0.5]]");
  // A string where no token is meant.
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "repetition_penalty": "the"})")),
            "experiments/x.json: runs[0].repetition_penalty = \"the\" is not allowed; allowed: a number > 0 (1 turns it off)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "hf", "no_repeat_ngram_size": "2"})")),
            "experiments/x.json: runs[0].no_repeat_ngram_size = \"2\" is not allowed; allowed: an integer >= 0 (0 turns it off)");
  EXPECT_EQ(error_of(with_run(R"({"mode": "greedy", "framework": "llama.cpp", "logit_bias": [["Hello", "a lot"]]})")),
            "experiments/x.json: runs[0].logit_bias = [[\"Hello\",\"a lot\"]] is not allowed; allowed: a list of [token id or text, "
            "bias] pairs (a text biases every token it encodes to), bias a finite number or false / \"-Infinity\" (never), e.g. "
            "[[50256, false], [\"Hello\", -0.5]]");
}

TEST(ControlTextErrors, SuppressTokensRefusesATextOfSeveralTokensNamingThem) {
  ExpandedRun r = parse_experiment(with_run(R"({"mode": "greedy", "framework": "hf", "suppress_tokens": [50256, "the cat"]})"), "x.json")
                      .runs.at(0);
  const auto refused = encode_control_texts(r.params, tokenizer());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->control, "suppress_tokens");
  EXPECT_EQ(refused->entry, 1);
  EXPECT_EQ(refused->allowed,
            "a text of exactly one token (suppress_tokens takes single tokens); Hugging Face's rule (add_prefix_space=True, "
            "add_special_tokens=False) encodes this one to 2 tokens, [262,3797]: give one text per token, or the ids");
  EXPECT_EQ(r.params.sampling.controls.suppress_tokens, (std::vector<int64_t>{50256, -1}));  // unchanged: nothing placed
}

TEST(ControlTextErrors, EvidenceWhoseTextsDoNotSayWhatTheListsHoldIsRefused) {
  const ordered_json good = params_to_json(
      encoded_run(R"({"mode": "greedy", "framework": "hf", "bad_words_ids": [[7850], "the cat"]})").params);
  const auto refused = [&](const std::function<void(json&)>& edit) {
    json j(good);
    edit(j);
    try {
      params_from_json(j, "runs[0].params");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(refused([](json&) {}), "(no error)");
  EXPECT_EQ(refused([](json& j) { j["control_texts"][0]["ids"] = {1169, 3797}; }),
            "runs[0].params.control_texts[0]: ids [1169,3797] are not what bad_words_ids[1] holds ([[7850],[262,3797]]); "
            "allowed: the ids the entry holds");
  EXPECT_EQ(refused([](json& j) { j["control_texts"][0]["entry"] = 5; }),
            "runs[0].params.control_texts[0]: entry 5 is past the end of bad_words_ids (2 entries)");
  EXPECT_EQ(refused([](json& j) { j["control_texts"][0]["control"] = "logit_bias"; }),
            "runs[0].params.control_texts[0]: control = \"logit_bias\" is not allowed; allowed: a list control of framework hf "
            "(suppress_tokens, bad_words_ids, sequence_bias)");
  EXPECT_EQ(refused([](json& j) { j["control_texts"] = json::array(); }),
            "runs[0].params.control_texts = [] is not allowed; allowed: a non-empty list (a run given no text writes none)");
  EXPECT_EQ(refused([](json& j) { j["bad_words_ids"][1] = "the cat"; }),
            "runs[0].params.bad_words_ids[1] = \"the cat\" is not allowed; allowed: token ids (evidence records the ids a text "
            "became, and the text in control_texts)");
  EXPECT_EQ(refused([](json& j) { j["control_texts"][0].erase("ids"); }),
            "runs[0].params.control_texts[0] is not allowed; allowed: an object of exactly \"control\", \"entry\", \"text\" and \"ids\"");
}

}  // namespace
}  // namespace genrepro
