// The frameworks' whole generations again, on generate's default path: the KV cache and the
// batched decoder instead of --no-cache. The reference ids are the ones framework_loop_test.cpp
// compares (tests/reference/framework_references.py: Hugging Face's processors and llama.cpp's
// libllama chain on gpt2_reference.py's forward pass, use_cache=False); a cached step computes its
// logits from one new row, so this asserts that those logits pick what the full recomputation picks,
// token for token, for every reference run. ctest: reference.frameworks.cached_loops.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

void expect_same_generations_cached(const char* env, const std::string& framework) {
  const char* path = std::getenv(env);
  if (path == nullptr) GTEST_SKIP() << env << " is not set (ctest sets it)";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing (its reference did not run: see reference.frameworks.loops.python)";
  const nlohmann::json reference = nlohmann::json::parse(read_bytes(path));
  int compared = 0;
  for (const nlohmann::json& run : reference["runs"]) {
    const nlohmann::json& c = run["config"];
    const bool greedy = c.value("greedy", false);
    std::vector<std::string> args = {"generate", "--model", tiny_model(), "--prompt", "the river bank was", "--ids",
                                     "--max-new-tokens", std::to_string(reference["max_new_tokens"].get<int64_t>()),
                                     "--framework", framework};
    // llama.cpp samples unless told not to (as llama-cli does); a greedy configuration says so.
    if (greedy) args.push_back("--greedy");
    for (const auto& item : c.items()) {
      std::string key = item.key();
      if (key == "name" || key == "greedy" || key == "order" || (key == "seed" && greedy)) continue;
      for (char& ch : key)
        if (ch == '_') ch = '-';
      args.push_back("--" + key);
      args.push_back(item.value().is_string() ? item.value().get<std::string>() : item.value().dump());
    }
    const CliResult r = genrepro(args);
    ASSERT_EQ(r.exit, 0) << describe(args, r);
    const auto expected = run["ids"].get<std::vector<int64_t>>();
    EXPECT_EQ(nlohmann::json::parse(r.out).get<std::vector<int64_t>>(), expected) << c["name"] << "\n" << describe(args, r);
    compared += static_cast<int>(expected.size());
  }
  EXPECT_GE(compared, 100);
  std::cout << "[" << framework << " loop, KV cache] " << reference["runs"].size() << " generations, " << compared << " tokens compared\n";
}

TEST(FrameworkLoopsCached, HfWithTheKvCachePicksWhatHuggingFacesProcessorsPick) {
  expect_same_generations_cached("GENREPRO_FRAMEWORK_LOOP_HF", "hf");
}

TEST(FrameworkLoopsCached, LlamaCppWithTheKvCachePicksWhatLlamaCppsChainPicks) {
  expect_same_generations_cached("GENREPRO_FRAMEWORK_LOOP_LLAMA_CPP", "llama.cpp");
}

}  // namespace
}  // namespace genrepro::test
