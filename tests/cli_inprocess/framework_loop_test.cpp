// Whole generations: `genrepro generate --framework hf|llama.cpp ... --ids --no-cache` on the tiny
// fixture against the frameworks' own chains on the same model (tests/reference/hf_processors.py:
// Hugging Face's processors with torch.multinomial; tests/reference/llama_cpp_sampling.py:
// llama.cpp's libllama sampler chain, the prompt accepted first as llama-completion does), both on
// gpt2_reference.py's forward pass: 60 new tokens each, token for token. ctest runs these as
// reference.frameworks.hf_loop and reference.frameworks.llama_cpp_loop, after the Python side wrote
// $GENREPRO_FRAMEWORK_LOOP_HF / $GENREPRO_FRAMEWORK_LOOP_LLAMA_CPP.
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

// A reference configuration as the flags a user would type.
std::vector<std::string> flags_of(const nlohmann::json& c, const std::string& framework) {
  std::vector<std::string> args = {"--framework", framework};
  bool greedy = c.value("greedy", false);
  // llama.cpp samples unless told not to (as llama-cli does); a greedy configuration says so.
  if (greedy) args.push_back("--greedy");
  for (const auto& item : c.items()) {
    const std::string& key = item.key();
    if (key == "name" || key == "greedy" || key == "order") continue;
    if (key == "seed" && greedy) continue;
    std::string flag = "--" + key;
    for (char& ch : flag)
      if (ch == '_') ch = '-';
    args.push_back(flag);
    args.push_back(item.value().is_string() ? item.value().get<std::string>() : item.value().dump());
  }
  return args;
}

void expect_same_generations(const char* env, const std::string& framework) {
  const char* path = std::getenv(env);
  if (path == nullptr) GTEST_SKIP() << env << " is not set (ctest sets it)";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing (its reference did not run: see its ctest entry)";
  const nlohmann::json reference = nlohmann::json::parse(read_bytes(path));
  int compared = 0;
  for (const nlohmann::json& run : reference["runs"]) {
    const auto expected = run["ids"].get<std::vector<int64_t>>();
    std::vector<std::string> args = {"generate", "--model", tiny_model(), "--prompt", "the river bank was", "--ids", "--no-cache",
                                     "--max-new-tokens", std::to_string(reference["max_new_tokens"].get<int64_t>())};
    for (const std::string& f : flags_of(run["config"], framework)) args.push_back(f);
    const CliResult r = genrepro(args);
    ASSERT_EQ(r.exit, 0) << describe(args, r);
    const auto got = nlohmann::json::parse(r.out).get<std::vector<int64_t>>();
    size_t first = 0;
    while (first < got.size() && first < expected.size() && got[first] == expected[first]) ++first;
    EXPECT_EQ(got, expected) << run["config"]["name"] << ": first difference at new token " << first << " (lengths "
                             << got.size() << " vs " << expected.size() << ")\n" << describe(args, r);
    compared += static_cast<int>(expected.size());
  }
  EXPECT_GE(compared, 100);
  std::cout << "[" << framework << " loop] " << reference["runs"].size() << " generations, " << compared << " tokens compared\n";
}

TEST(FrameworkLoops, GenerateFrameworkHfPicksWhatHuggingFacesProcessorsPick) {
  expect_same_generations("GENREPRO_FRAMEWORK_LOOP_HF", "hf");
}

TEST(FrameworkLoops, GenerateFrameworkLlamaCppPicksWhatLlamaCppsChainPicks) {
  expect_same_generations("GENREPRO_FRAMEWORK_LOOP_LLAMA_CPP", "llama.cpp");
}

}  // namespace
}  // namespace genrepro::test
