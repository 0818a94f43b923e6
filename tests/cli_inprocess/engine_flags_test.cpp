// The llama.cpp engine's flags on `run` and the `export` verb: what --help says, and every bad
// value or missing library refused in one line with exit 2 before anything is written (the
// engine against the real libllama: tests/reference/engines.cmake).
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_inprocess/cli_case.hpp"
#include "support/text_match.hpp"

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
     R"re(temperature\.json: run temperature/p0/sample-.* with --engine llama\.cpp: framework = "article" is not allowed; allowed: "llama\.cpp" for a sampled run of engine llama\.cpp \(or mode greedy, or max_new_tokens 0\))re",
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

namespace genrepro::test {
namespace {

// golden/fixture's greedy evidence as llama.cpp's engine records it (params.engine, the spec
// `run --engine` records, the llama_cpp block).
std::string llama_evidence(const ScratchDir& scratch) {
  nlohmann::json e = nlohmann::json::parse(read_bytes(source_path("golden/fixture/greedy.json")));
  for (auto& run : e["runs"]) run["params"]["engine"] = "llama.cpp";
  for (auto& x : e["experiments"]) x["spec"]["engine"] = "llama.cpp";
  e["llama_cpp"] = {{"library", "/opt/llama/libllama.so"}, {"library_sha256", std::string(64, '0')},
                    {"ggml_version", "0.25.1"}, {"ggml_commit", "0ad4a86"}, {"cpu_backend", "libggml-cpu-haswell.so"},
                    {"system_info", "CPU : AVX2 = 1 |"}, {"kv_type", "f16"}, {"flash_attn", "auto"}, {"threads", 1},
                    {"n_ubatch", 512}, {"gguf_sha256", std::string(64, '1')}, {"gguf_export_revision", 1}};
  return scratch.write("llama.json", e.dump());
}

TEST(EngineEvidence, ReplayRefusesLlamaCppRunsNamingTheWay) {
  const ScratchDir scratch("engine-replay");
  const std::vector<std::string> args = {"replay", llama_evidence(scratch), "--model", tiny_model()};
  const CliResult r = genrepro(args);
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_TRUE(Searches(R"re(ran on engine llama\.cpp, and replay runs genrepro's forward; run the experiment again with 'genrepro run --engine llama\.cpp')re", r.err)) << r.err;
}

TEST(EngineEvidence, TheBlockMustComeWithItsRuns) {
  const ScratchDir scratch("engine-block");
  nlohmann::json e = nlohmann::json::parse(read_bytes(llama_evidence(scratch)));
  e.erase("llama_cpp");
  const std::string without = scratch.write("without.json", e.dump());
  const CliResult r = genrepro({"diff", source_path("golden/fixture/greedy.json"), without});
  EXPECT_EQ(r.exit, 2) << r.err;
  EXPECT_TRUE(Searches(R"re(llama_cpp: missing, though run greedy/p0/greedy-[0-9a-f]+ ran on engine llama\.cpp)re", r.err)) << r.err;
}

}  // namespace
}  // namespace genrepro::test
