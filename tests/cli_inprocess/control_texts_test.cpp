// Tokens given as text through the verbs, on the tiny fixture: generate's llama.cpp
// logit_bias text never lets its tokens be picked, an hf bad_words_ids text blocks its sequence and
// the evidence records the text and its ids, the reader refuses a control_texts entry whose ids the
// tokenizer does not give, a text giving the same ids as before changes no output, and a bad text is
// refused by plan, run and generate before anything runs.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"
#include "tokenizer/tokenizer.hpp"

namespace genrepro::test {
namespace {

using nlohmann::json;

const Gpt2Tokenizer& tokenizer() {
  static const Gpt2Tokenizer t = Gpt2Tokenizer::from_directory(tokenizer_dir());
  return t;
}

EncodeOptions rule(bool hf) {
  EncodeOptions o;
  o.prefix_space = hf;     // Hugging Face's add_prefix_space=True
  o.special_tokens = hf;   // llama.cpp's parse_special false
  return o;
}

std::vector<int64_t> ids_of(const CliResult& r) { return json::parse(r.out).get<std::vector<int64_t>>(); }

std::vector<std::string> generate(std::vector<std::string> extra) {
  std::vector<std::string> args = {"generate", "--model", tiny_model(), "--prompt", "the river bank was", "--ids"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(ControlTextsCli, LlamaCppLogitBiasTextNeverPicksItsTokens) {
  const std::vector<std::string> sampled = {"--framework", "llama.cpp", "--seed", "7", "--temperature", "1.5", "-n", "40"};
  const CliResult base = genrepro(generate(sampled));
  ASSERT_EQ(base.exit, 0) << base.err;
  const std::vector<int64_t> before = ids_of(base);
  // The token picked most often, as the text it decodes to (one that encodes back to it alone).
  std::map<int64_t, int> count;
  for (int64_t id : before) ++count[id];
  std::vector<std::pair<int, int64_t>> by_count;
  for (const auto& [id, n] : count) by_count.emplace_back(-n, id);
  std::sort(by_count.begin(), by_count.end());
  int64_t token = -1;
  std::string text;
  for (const auto& [n, id] : by_count) {
    text = tokenizer().decode({id});
    if (tokenizer().encode(text, rule(false)) == std::vector<int64_t>{id}) {
      token = id;
      break;
    }
  }
  ASSERT_GE(token, 0) << "no picked token round-trips as text";

  std::vector<std::string> biased = sampled;
  biased.insert(biased.end(), {"--logit-bias", json::array({json::array({text, false}), json::array({"Hello", false})}).dump()});
  const CliResult r = genrepro(generate(biased));
  ASSERT_EQ(r.exit, 0) << r.err;
  const std::vector<int64_t> after = ids_of(r);
  EXPECT_EQ(after.size(), 40u);
  EXPECT_EQ(std::count(after.begin(), after.end(), token), 0) << json(after).dump();
  EXPECT_EQ(std::count(after.begin(), after.end(), 15496), 0);  // "Hello", as llama.cpp encodes it
  EXPECT_TRUE(Searches("text: --logit-bias\\[0\\] \\Q" + json(text).dump() + "\\E -> \\[" + std::to_string(token) +
                           "\\] by llama.cpp's rule",
                       r.err))
      << r.err;
  EXPECT_TRUE(Searches(R"re(text: --logit-bias\[1\] "Hello" -> \[15496\])re", r.err)) << r.err;
}

// An hf greedy experiment of 20 new tokens, its bad_words_ids as given.
std::string hf_experiment(const ScratchDir& scratch, const std::string& file, const json& bad_words) {
  json x = {{"name", "texts"}, {"prompts", {"the river bank was"}}, {"max_new_tokens", 20},
            {"runs", {{{"mode", "greedy"}, {"framework", "hf"}}}}};
  if (!bad_words.is_null()) x["runs"][0]["bad_words_ids"] = bad_words;
  return scratch.write(file, x.dump());
}

json run_evidence(const std::string& experiment, const std::string& out) {
  const CliResult r = genrepro({"run", experiment, "--model", tiny_model(), "--threads", "1", "--out", out});
  EXPECT_EQ(r.exit, 0) << r.err;
  return json::parse(read_bytes(out));
}

std::vector<int64_t> output_ids(const json& evidence) { return evidence["runs"][0]["output_ids"].get<std::vector<int64_t>>(); }

struct Bigram {
  int64_t first = -1, second = -1;
  std::string text;
};

// A pair of tokens the unbanned run picks one after the other, as the text Hugging Face's rule
// encodes back to exactly that pair.
Bigram picked_pair(const std::vector<int64_t>& out) {
  for (size_t i = 1; i < out.size(); ++i) {
    const std::string text = tokenizer().decode({out[i - 1], out[i]});
    if (tokenizer().encode(text, rule(true)) == std::vector<int64_t>{out[i - 1], out[i]}) return {out[i - 1], out[i], text};
  }
  return {};
}

bool holds_pair(const std::vector<int64_t>& context, const Bigram& b) {
  for (size_t i = 1; i < context.size(); ++i)
    if (context[i - 1] == b.first && context[i] == b.second) return true;
  return false;
}

TEST(ControlTextsCli, HfBadWordsTextBlocksItsSequenceAndTheEvidenceSaysWhereTheIdsCameFrom) {
  const ScratchDir scratch("control-texts-cli");
  const std::vector<int64_t> free = output_ids(run_evidence(hf_experiment(scratch, "free.json", nullptr), scratch.path().string() + "/free-ev.json"));
  const Bigram pair = picked_pair(free);
  ASSERT_GE(pair.first, 0) << json(free).dump();

  const std::string banned_out = scratch.path().string() + "/banned-ev.json";
  const json banned = run_evidence(hf_experiment(scratch, "banned.json", json::array({pair.text})), banned_out);
  const json& params = banned["runs"][0]["params"];
  EXPECT_EQ(params["bad_words_ids"], json::array({json::array({pair.first, pair.second})}));
  EXPECT_EQ(params["control_texts"],
            json::parse(R"([{"control": "bad_words_ids", "entry": 0, "text": )" + json(pair.text).dump() + R"(, "ids": [)" +
                        std::to_string(pair.first) + "," + std::to_string(pair.second) + "]}]"));
  std::vector<int64_t> context = banned["runs"][0]["prompt_ids"].get<std::vector<int64_t>>();
  const std::vector<int64_t> out = output_ids(banned);
  context.insert(context.end(), out.begin(), out.end());
  EXPECT_TRUE(holds_pair(free, pair));
  EXPECT_FALSE(holds_pair(context, pair)) << json(out).dump();
  const CliResult same = genrepro({"diff", banned_out, banned_out});  // read, checked, and consistent
  EXPECT_EQ(same.exit, 0) << same.out << same.err;

  // Ids the tokenizer does not give for the text, written in the list and in control_texts alike.
  json forged = banned;
  const int64_t other = pair.second == 13 ? 11 : 13;
  forged["runs"][0]["params"]["bad_words_ids"][0][1] = other;
  forged["runs"][0]["params"]["control_texts"][0]["ids"][1] = other;
  const std::string forged_out = scratch.write("forged-ev.json", forged.dump(1));
  const CliResult r = genrepro({"diff", banned_out, forged_out});
  EXPECT_EQ(r.exit, 2) << r.out << r.err;
  EXPECT_TRUE(Searches(R"re(^genrepro: error: .*forged-ev\.json: runs\[0\]\.params\.control_texts\[0\]\.ids: found \[)re" +
                           std::to_string(pair.first) + "," + std::to_string(other) + R"re(\]; allowed: \[)re" +
                           std::to_string(pair.first) + "," + std::to_string(pair.second) +
                           R"re(\] \(Hugging Face's rule \(add_prefix_space=True, add_special_tokens=False\) applied to its text)re",
                       r.err))
      << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(ControlTextsCli, ATextThatEncodesToTheSameIdsChangesNoOutput) {
  // "the cat" and [262, 3797] are one sequence by Hugging Face's rule (" the cat"): another run id
  // (the file says something else, as a changed prompt would), the same arithmetic. diff pairs the
  // two runs and names control_texts as the only difference, with every output agreeing.
  const ScratchDir scratch("control-texts-cli");
  const std::string ids_out = scratch.path().string() + "/ids-ev.json", text_out = scratch.path().string() + "/text-ev.json";
  const json by_ids = run_evidence(hf_experiment(scratch, "ids.json", json::parse("[[262, 3797]]")), ids_out);
  const json by_text = run_evidence(hf_experiment(scratch, "text.json", json::parse(R"(["the cat"])")), text_out);
  EXPECT_NE(by_ids["runs"][0]["id"], by_text["runs"][0]["id"]);
  EXPECT_EQ(by_ids["runs"][0]["params"]["bad_words_ids"], by_text["runs"][0]["params"]["bad_words_ids"]);
  EXPECT_EQ(output_ids(by_ids), output_ids(by_text));
  EXPECT_FALSE(by_ids["runs"][0]["params"].contains("control_texts"));
  const CliResult r = genrepro({"diff", ids_out, text_out});
  EXPECT_EQ(r.exit, 1) << r.out << r.err;  // other ids: the gate stays exact
  EXPECT_TRUE(Searches(R"re(paired run texts/p0/hf-greedy-\w+ → texts/p0/hf-greedy-\w+)re", r.out)) << r.out;
  EXPECT_TRUE(Searches(R"re(only parameters differ \(control_texts \[\] -> \[\{"control":"bad_words_ids".*\); every output agrees)re", r.out))
      << r.out;
}

TEST(ControlTextsCli, PlanAndRunRefuseABadTextBeforeAnyRun) {
  const ScratchDir scratch("control-texts-cli");
  const std::string x = scratch.write(
      "x.json", R"({"name": "x", "prompts": ["the river bank was"], "max_new_tokens": 2,
                    "runs": [{"mode": "greedy"}, {"mode": "greedy", "framework": "hf", "suppress_tokens": [50256, "the cat"]}]})");
  const std::string line = "x\\.json: runs\\[1\\]\\.suppress_tokens\\[1\\] = \"the cat\" is not allowed; allowed: a text of exactly one "
                           "token \\(suppress_tokens takes single tokens\\); Hugging Face's rule \\(add_prefix_space=True, "
                           "add_special_tokens=False\\) encodes this one to 2 tokens, \\[262,3797\\]: give one text per token, or the ids";
  const CliResult plan = genrepro({"plan", x, "--model", tiny_model()});
  EXPECT_EQ(plan.exit, 2) << plan.out << plan.err;
  EXPECT_TRUE(Searches(line, plan.err)) << plan.err;
  expect_bad_input_keeps_out({"run", x, "--model", tiny_model()}, line);
}

const std::vector<CliCase> kBadFlagTexts = {
    {"suppress_tokens_of_two_tokens", generate({"--framework", "hf", "--suppress-tokens", R"([" the cat"])"}), 2, "",
     R"re(--suppress-tokens\[0\] = " the cat" is not allowed; allowed: a text of exactly one token \(suppress_tokens takes single tokens\); Hugging Face's rule .* encodes this one to 2 tokens, \[262,3797\])re",
     Stderr::one_line},
    {"bad_words_empty_text", generate({"--framework", "hf", "--bad-words-ids", R"([[1169], ""])"}), 2, "",
     R"re(--bad-words-ids\[1\] = "" is not allowed; allowed: a non-empty text \(the tokenizer encodes it by the framework's rule\) or a list of token ids)re",
     Stderr::one_line},
    {"logit_bias_empty_text", generate({"--framework", "llama.cpp", "--logit-bias", R"([["", false]])"}), 2, "",
     R"re(--logit-bias\[0\]\[0\] = "" is not allowed; allowed: a non-empty text)re", Stderr::one_line},
    {"text_in_a_number_control", generate({"--framework", "hf", "--repetition-penalty", R"("the")"}), 2, "",
     R"re(--repetition-penalty = "the" is not allowed; allowed: a number > 0)re", Stderr::one_line},
    // Hugging Face's rule encodes "a!" to [257, 0] (" a", "!"), and HF's list form refuses id 0: checked once encoded.
    {"sequence_bias_text_of_id_0", generate({"--framework", "hf", "--sequence-bias", R"([["a!", 1.0]])"}), 2, "",
     R"re(--sequence-bias = \[\[\[257,0\],1.0\]\] is not allowed; allowed: .*\(Hugging Face refuses token id 0 in this list form\))re",
     Stderr::one_line},
};

class BadFlagTexts : public ::testing::TestWithParam<CliCase> {};
TEST_P(BadFlagTexts, AreRefusedBeforeTheEngineRuns) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(ControlTextsCli, BadFlagTexts, ::testing::ValuesIn(kBadFlagTexts), CaseName{});

}  // namespace
}  // namespace genrepro::test
