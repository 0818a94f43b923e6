// The engine parameter (docs/engines.md): one row of the parameter table, read from experiment
// files and evidence, written only for llama.cpp, kept out of run ids so two engines' runs pair,
// and refused where llama.cpp's engine cannot run (a sampled run of another framework's chain).
#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "params/param_table.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

constexpr const char* kPath = "experiments/engine.json";

ExperimentSpec parse(const std::string& runs, const std::string& top = "") {
  return parse_experiment(R"({"name": "e", "prompts": ["the river bank was"], )" + top + R"("runs": [)" + runs + "]}", kPath);
}

std::string error_of(const std::string& runs, const std::string& top = "") {
  try {
    parse(runs, top);
  } catch (const SpecError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a SpecError";
  return {};
}

TEST(EngineParam, AnEntryOrTheTopLevelNamesTheEngineAndIdsDoNotChange) {
  const ExperimentSpec plain = parse(R"({"mode": "greedy"}, {"mode": "sample", "framework": "llama.cpp", "seed": 1})");
  const ExperimentSpec top = parse(R"({"mode": "greedy"}, {"mode": "sample", "framework": "llama.cpp", "seed": 1})",
                                   R"("engine": "llama.cpp", )");

  ASSERT_EQ(top.runs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(plain.runs[i].params.engine, Engine::genrepro);
    EXPECT_EQ(top.runs[i].params.engine, Engine::llama_cpp);
    EXPECT_EQ(top.runs[i].id, plain.runs[i].id) << "the engine is no part of a run id";
  }
}

TEST(EngineParam, NotAGridAxisSinceIdsLeaveItOut) {
  const std::string e = error_of(R"({"mode": "greedy", "engine": ["genrepro", "llama.cpp"]})");
  EXPECT_NE(e.find("runs[0].engine"), std::string::npos) << e;
  EXPECT_NE(e.find("one value, not a list: run ids leave the engine out"), std::string::npos) << e;
  const std::string top = error_of(R"({"mode": "greedy"})", R"("engine": ["llama.cpp"], )");
  EXPECT_NE(top.find("engine"), std::string::npos) << top;
}

TEST(EngineParam, WrittenOnlyForLlamaCppAndReadBack) {
  RunParams p;
  EXPECT_FALSE(params_to_json(p).contains("engine")) << "evidence of genrepro's engine is as it was";
  EXPECT_EQ(params_from_json(params_to_json(p), "params").engine, Engine::genrepro);
  p.engine = Engine::llama_cpp;
  const auto j = params_to_json(p);
  ASSERT_TRUE(j.contains("engine"));
  EXPECT_EQ(j["engine"], "llama.cpp");
  EXPECT_EQ(params_from_json(j, "params").engine, Engine::llama_cpp);
  nlohmann::json bad = j;
  bad["engine"] = "vllm";
  EXPECT_THROW(params_from_json(bad, "params"), SpecError);
}

TEST(EngineParam, LlamaCppSamplesOnlyWithItsOwnChain) {
  EXPECT_NO_THROW(parse(R"({"mode": "greedy", "engine": "llama.cpp"})"));
  EXPECT_NO_THROW(parse(R"({"mode": "sample", "framework": "llama.cpp", "seed": 1, "engine": "llama.cpp"})"));
  const std::string e = error_of(R"({"mode": "sample", "seed": 1, "engine": "llama.cpp"})");
  EXPECT_NE(e.find(kPath), std::string::npos) << e;
  EXPECT_NE(e.find("framework"), std::string::npos) << e;
  EXPECT_NE(e.find("\"llama.cpp\" for a sampled run of engine llama.cpp (or mode greedy, or max_new_tokens 0)"), std::string::npos) << e;
  EXPECT_NO_THROW(parse(R"({"mode": "sample", "seed": 1, "max_new_tokens": 0, "engine": "llama.cpp"})"))
      << "a first prediction picks nothing: any framework's record of llama.cpp's logits";
  const std::string name = error_of(R"({"mode": "greedy", "engine": "vllm"})");
  EXPECT_NE(name.find("genrepro, llama.cpp"), std::string::npos) << name;
}

TEST(EngineParam, OverrideNamesTheFirstRunItCannotRun) {
  ExperimentSpec ok = parse(R"({"mode": "greedy"}, {"mode": "sample", "framework": "llama.cpp", "seed": 1})");
  const std::string id = ok.runs[0].id;
  override_engine(ok, Engine::llama_cpp);
  EXPECT_EQ(ok.runs[0].params.engine, Engine::llama_cpp);
  EXPECT_EQ(ok.runs[0].id, id);
  EXPECT_EQ(ok.spec["engine"], "llama.cpp") << "the recorded spec says what ran";
  ExperimentSpec article = parse(R"({"mode": "greedy"}, {"mode": "sample", "seed": 7})");
  try {
    override_engine(article, Engine::llama_cpp);
    FAIL() << "an article-chain sampled run cannot run on llama.cpp's engine";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(article.runs[1].id), std::string::npos) << m;
    EXPECT_NE(m.find("--engine llama.cpp"), std::string::npos) << m;
  }
}

TEST(EngineParam, LabelSaysWhichEngine) {
  RunParams p;
  p.sampling.mode = DecodeMode::greedy;
  p.engine = Engine::llama_cpp;
  const std::vector<LabelPart> parts = label_parts(p);
  ASSERT_FALSE(parts.empty());
  EXPECT_EQ(parts.front().text, "llama.cpp engine");
}

}  // namespace
}  // namespace genrepro
