// The llama.cpp engine's flags on `run` and the `export` verb: what --help says, and every bad
// value or missing library refused in one line with exit 2 before anything is written (the
// engine against the real libllama: tests/reference/engines.cmake).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"

namespace genrepro::test {
namespace {

const std::string kGreedy = source_path("experiments/article/greedy.json");
const std::string kEngines = source_path("experiments/engines/llama_cpp.json");

class EngineFlags : public ::testing::TestWithParam<CliCase> {};
TEST_P(EngineFlags, ExitAndOutput) {
  const ScratchDir scratch("engine-flags");
  const std::vector<std::string> args = case_args(GetParam(), scratch);
  expect_result(GetParam(), args, genrepro(args));
}

const std::vector<CliCase> kCases = {
    {"run_help", {"run", "--help"}, 0, R"re(--engine.*llama\.cpp.*--llama-lib.*GENREPRO_LLAMA_LIB.*--llama-kv-type.*--llama-flash-attn)re", ""},
    {"export_help", {"export", "--help"}, 0, R"re(GGUF.*--model.*--gguf)re", ""},
    {"unknown_engine", {"run", kGreedy, "--engine", "vllm", "--out", "{scratch}/e.json"}, 2, "",
     R"re(--engine vllm: allowed: genrepro or llama\.cpp)re", Stderr::one_line},
    {"bad_kv_type", {"run", kGreedy, "--llama-kv-type", "q8_0", "--out", "{scratch}/e.json"}, 2, "",
     R"re(--llama-kv-type q8_0: allowed: f16 or f32)re", Stderr::one_line},
    {"bad_flash_attn", {"run", kGreedy, "--llama-flash-attn", "yes", "--out", "{scratch}/e.json"}, 2, "",
     R"re(--llama-flash-attn yes: allowed: auto, on or off)re", Stderr::one_line},
    {"article_chain_cannot_sample_on_llama",
     {"run", source_path("experiments/article/temperature.json"), "--engine", "llama.cpp", "--out", "{scratch}/e.json"}, 2, "",
     R"re(temperature\.json: run temperature/p0/sample-.* with --engine llama\.cpp: framework = "article" is not allowed; allowed: "llama\.cpp" for a sampled run of engine llama\.cpp)re",
     Stderr::one_line},
    {"export_to_a_directory", {"export", "--model", tiny_model(), "--gguf", "{scratch}"}, 2, "", R"re(--gguf .*is a directory|--gguf)re",
     Stderr::one_line},
};
INSTANTIATE_TEST_SUITE_P(Run, EngineFlags, ::testing::ValuesIn(kCases), CaseName{});

// A library that is not there, or none named: refused before any run, --out untouched.
TEST(EngineLibrary, MissingLibraryIsExit2KeepingOut) {
  expect_bad_input_keeps_out({"run", kEngines, "--model", tiny_model(), "--engine", "llama.cpp", "--llama-lib", "/nonexistent/libllama.so"},
                             R"re(^genrepro: error: --llama-lib /nonexistent/libllama\.so: no such file or directory)re");
  expect_bad_input_keeps_out({"run", kEngines, "--model", tiny_model(), "--engine", "llama.cpp", "--llama-lib", source_path("docs")},
                             R"re(^genrepro: error: --llama-lib .*docs: holds no libllama\*\.so; pass the library file itself)re");
}

}  // namespace
}  // namespace genrepro
