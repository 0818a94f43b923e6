// generate's flags come from the parameter table (params/param_table.hpp): every spelling a user
// of llama.cpp or Hugging Face types sets the same parameter as genrepro's own; --framework takes
// that framework's defaults (llama.cpp samples at T 0.8, generate() of GPT-2 is greedy); a
// spelling of another framework while this run's rules are another's is said on stderr with the
// switch; a control of another framework is refused naming --framework. In-process, against a
// recording stand-in for the engine: nothing here loads a model.
#include "cli/run_cli.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "unit/cli/no_engine.hpp"

namespace genrepro::cli {
namespace {

using test_support::RecordingEngine;

struct Generated {
  test_support::VerbResult result;
  RunParams params;
  std::string prompt;
};

Generated generate(std::vector<std::string> flags) {
  RecordingEngine engine;
  flags.insert(flags.begin(), "generate");
  Generated g{test_support::run_verb(flags, engine), {}, {}};
  if (!engine.generated.empty()) {
    g.params = engine.generated[0].params;
    g.prompt = engine.generated[0].prompt;
  }
  return g;
}

std::string describe(const Generated& g) { return "exit " + std::to_string(g.result.exit) + ", stderr: " + g.result.err; }

TEST(GenerateFlags, EverySpellingSetsItsParameter) {
  const Generated ours = generate({"--prompt", "x", "--temperature", "0.7", "--seed", "42", "--max-new-tokens", "20"});
  const Generated llama = generate({"-p", "x", "--temp", "0.7", "-s", "42", "-n", "20"});
  ASSERT_EQ(ours.result.exit, kExitOk) << describe(ours);
  ASSERT_EQ(llama.result.exit, kExitOk) << describe(llama);
  EXPECT_EQ(llama.params.sampling.temperature, 0.7);
  EXPECT_EQ(llama.params.sampling.seed, 42u);
  EXPECT_EQ(llama.params.max_new_tokens, 20);
  EXPECT_EQ(llama.params.sampling.mode, DecodeMode::sample);
  EXPECT_EQ(params_to_json(llama.params), params_to_json(ours.params));
  EXPECT_EQ(generate({"-p", "x", "--n-predict", "9"}).params.max_new_tokens, 9);
  // llama.cpp's --samplers, --typical and --dynatemp-exp name the same parameters.
  const Generated samplers = generate({"-p", "x", "--framework", "llama.cpp", "--samplers",
                                       "top_k,top_p,min_p,typical_p,top_n_sigma,penalties,temperature", "--typical", "0.9",
                                       "--dynatemp-exp", "1.5"});
  ASSERT_EQ(samplers.result.exit, kExitOk) << describe(samplers);
  EXPECT_EQ(stage_names(samplers.params.sampling.sampler_order),
            (std::vector<std::string>{"logit_bias", "top_k", "top_p", "min_p", "typical_p", "top_n_sigma", "penalties",
                                      "temperature", "dist"}));
  EXPECT_EQ(samplers.params.sampling.controls.typical_p, 0.9);
  EXPECT_EQ(samplers.params.sampling.controls.dynatemp_exponent, 1.5);
}

TEST(GenerateFlags, TheFrameworksDefaultsWithNoSamplingFlag) {
  // llama.cpp samples by default, at its T 0.8, top_k 40, top_p 0.95, min_p 0.05.
  const Generated llama = generate({"-p", "x", "--framework", "llama.cpp"});
  ASSERT_EQ(llama.result.exit, kExitOk) << describe(llama);
  EXPECT_EQ(llama.params.sampling.mode, DecodeMode::sample);
  EXPECT_EQ(llama.params.sampling.temperature, 0.8);
  EXPECT_EQ(llama.params.sampling.top_k, 40);
  EXPECT_EQ(llama.params.sampling.top_p, 0.95);
  EXPECT_EQ(llama.params.sampling.controls.min_p, 0.05);
  // --greedy and --temp 0 are llama.cpp's greedy.
  EXPECT_EQ(generate({"-p", "x", "--framework", "llama.cpp", "--greedy"}).params.sampling.mode, DecodeMode::greedy);
  EXPECT_EQ(generate({"-p", "x", "--framework", "llama.cpp", "--temp", "0"}).params.sampling.mode, DecodeMode::greedy);
  // generate() of GPT-2 is greedy (do_sample False); --do-sample samples at its T 1, top_k 50.
  EXPECT_EQ(generate({"-p", "x", "--framework", "hf"}).params.sampling.mode, DecodeMode::greedy);
  const Generated hf = generate({"-p", "x", "--framework", "hf", "--do-sample"});
  ASSERT_EQ(hf.result.exit, kExitOk) << describe(hf);
  EXPECT_EQ(hf.params.sampling.mode, DecodeMode::sample);
  EXPECT_EQ(hf.params.sampling.temperature, 1.0);
  EXPECT_EQ(hf.params.sampling.top_k, 50);
  // The article's first loop is greedy.
  EXPECT_EQ(generate({"-p", "x"}).params.sampling.mode, DecodeMode::greedy);
}

TEST(GenerateFlags, AnotherFrameworksSpellingIsSaidWithTheSwitch) {
  const Generated g = generate({"-p", "x", "-n", "20", "-s", "42", "--temp", "0.7", "--top-k", "40"});
  ASSERT_EQ(g.result.exit, kExitOk) << describe(g);
  EXPECT_EQ(g.result.err,
            "genrepro: note: --temp, -s, -n are llama.cpp's spellings; this run uses the article's loop (temperature -> top_k -> "
            "top_p, torch's draw); add --framework llama.cpp for llama.cpp's rules and defaults\n");
  // Under llama.cpp's own rules nothing is said.
  EXPECT_EQ(generate({"-p", "x", "--framework", "llama.cpp", "-s", "42", "--temp", "0.7"}).result.err, "");
  const Generated hf = generate({"-p", "x", "--do-sample"});
  EXPECT_NE(hf.result.err.find("--do-sample is hf's spelling"), std::string::npos) << hf.result.err;
  EXPECT_NE(hf.result.err.find("add --framework hf"), std::string::npos) << hf.result.err;
}

TEST(GenerateFlags, AControlOfAnotherFrameworkIsRefusedNamingTheFramework) {
  const Generated g = generate({"-p", "x", "--repeat-penalty", "1.1"});
  EXPECT_EQ(g.result.exit, kExitBadInput);
  EXPECT_EQ(g.result.err,
            "genrepro: error: --repeat-penalty = 1.1 is not allowed; allowed: its off value 1.0 unless framework llama.cpp "
            "(repeat_penalty is llama.cpp's control; this run's framework is article); add --framework llama.cpp\n");
  const Generated hf = generate({"-p", "x", "--framework", "llama.cpp", "--repetition-penalty", "1.3"});
  EXPECT_EQ(hf.result.exit, kExitBadInput);
  EXPECT_NE(hf.result.err.find("; add --framework hf\n"), std::string::npos) << hf.result.err;
  const Generated both = generate({"-p", "x", "--min-p", "0.1"});
  EXPECT_NE(both.result.err.find("; add --framework hf or --framework llama.cpp\n"), std::string::npos) << both.result.err;
}

TEST(GenerateFlags, ThePromptAsAnArgumentAFileOrStandardInput) {
  EXPECT_EQ(generate({"the river bank was"}).prompt, "the river bank was");
  const std::string path = ::testing::TempDir() + "genrepro_prompt.txt";
  std::ofstream(path) << "from a file";
  EXPECT_EQ(generate({"-f", path}).prompt, "from a file");
  EXPECT_EQ(generate({"--prompt-file", path}).prompt, "from a file");
  std::remove(path.c_str());
  const Generated two = generate({"text", "--prompt", "other"});
  EXPECT_EQ(two.result.exit, kExitBadInput);
  EXPECT_EQ(two.result.err, "genrepro: error: --prompt and the positional prompt \"text\" both give the prompt; give one\n");
  const Generated none = generate({"-n", "3"});
  EXPECT_EQ(none.result.exit, kExitBadInput);
  EXPECT_NE(none.result.err.find("(also: the text as the one argument, -p TEXT, -f PATH)"), std::string::npos) << none.result.err;
}

TEST(GenerateFlags, HelpNamesTheOtherSpellings) {
  const Generated help = generate({"--help"});
  EXPECT_EQ(help.result.exit, kExitOk);
  EXPECT_NE(help.result.out.find("[also --temp (llama.cpp's)]"), std::string::npos) << help.result.out;
  EXPECT_NE(help.result.out.find("[also -n (llama.cpp's), --n-predict (llama.cpp's)]"), std::string::npos);
  EXPECT_NE(help.result.out.find("--do-sample"), std::string::npos);
}

TEST(RunCliVerbs, AVerbTypoSuggestsByPrefixAndDistance) {
  RecordingEngine engine;
  EXPECT_EQ(test_support::run_verb({"gen", "-p", "x"}, engine).err,
            "genrepro: error: 'gen' is not a verb; did you mean 'generate'? (see 'genrepro --help')\n");
  // With --help an unknown verb is still an error, not the global help and exit 0.
  const test_support::VerbResult r = test_support::run_verb({"smaple", "--help"}, engine);
  EXPECT_EQ(r.exit, kExitBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("'smaple' is not a verb"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace genrepro::cli
