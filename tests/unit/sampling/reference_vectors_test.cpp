// The model-free chain against the frameworks' own code, on the data the engine's reference tests
// read (tests/reference/frameworks.cmake, tests/reference/sampling.cmake), with no libtorch in this
// process:
//   - Hugging Face's processors in plain PyTorch (hf_processors.py): 3,000 vectors, each through one
//     of 18 configurations with its own history; after every stage the kept set and the scores'
//     float32 bits, then the pick of a generator seeded per configuration (torch.multinomial).
//   - llama.cpp's own samplers (libllama through ctypes, llama_cpp_sampling.py): the same vectors,
//     6,000 cases; after every sampler the whole candidate array, then dist's pick and every p.
//   - The article's sampling code (article_sampling.py --fixed-logits): 1,260 picks of
//     torch.multinomial after logits / T, top_p_filter and softmax.
// ctest runs them as reference.frameworks.plain_chain_vectors and reference.article_fixed_logits.plain_chain
// after the Python side wrote the data; without it (a plain unit run) they skip.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "sampling/presets.hpp"
#include "support/reference_vectors.hpp"
#include "util/errors.hpp"

namespace genrepro::test {
namespace {

using sampling::Candidates;

std::string kept_hash(const Candidates& cur) {
  WordHash h;
  for (size_t i = 0; i < cur.size; ++i)
    if (cur.data[i].logit > -std::numeric_limits<float>::infinity()) h.add(static_cast<uint64_t>(cur.data[i].id));
  return h.str();
}

std::string bits_hash(const Candidates& cur) {
  WordHash h;
  for (size_t i = 0; i < cur.size; ++i) h.add(float_bits(cur.data[i].logit));
  return h.str();
}

std::string array_hash(const Candidates& a) {
  WordHash h;
  for (size_t i = 0; i < a.size; ++i) h.add((uint64_t{static_cast<uint32_t>(a.data[i].id)} << 32) | float_bits(a.data[i].logit));
  return h.str();
}

std::string p_hash(const Candidates& a) {
  WordHash h;
  for (size_t i = 0; i < a.size; ++i) h.add(float_bits(a.data[i].p));
  return h.str();
}

struct Vectors {
  nlohmann::json cases;
  std::vector<std::vector<float>> rows;
  std::string dir;
};

std::optional<Vectors> framework_vectors() {
  const char* dir = std::getenv("GENREPRO_FRAMEWORK_VECTORS");
  if (dir == nullptr) return std::nullopt;
  Vectors v;
  v.dir = dir;
  v.cases = nlohmann::json::parse(read_file_bytes(v.dir + "/cases.json"));
  std::vector<int64_t> sizes;
  for (const auto& c : v.cases.at("cases")) sizes.push_back(c.at("size").get<int64_t>());
  v.rows = read_vectors(v.dir + "/vectors.f32", sizes);
  return v;
}

TEST(PlainChainReference, HuggingFaceStagesAndPicksAsItsProcessors) {
  const std::optional<Vectors> data = framework_vectors();
  if (!data) GTEST_SKIP() << "GENREPRO_FRAMEWORK_VECTORS is not set (ctest sets it: reference.frameworks.plain_chain_vectors)";
  const nlohmann::json& ref = data->cases;
  const int64_t eos = ref.at("eos").get<int64_t>();
  std::map<std::string, SamplingParams> params;
  std::map<std::string, std::unique_ptr<sampling::Draw>> draws;  // one generator per configuration
  for (const auto& c : ref.at("configs")) {
    const std::string name = c.at("name").get<std::string>();
    params[name] = params_of(c, Framework::hf);
    draws[name] = sampling::preset_draw(params[name]);
  }
  int64_t stages = 0, set_mismatch = 0, bit_mismatch = 0, picks = 0, pick_mismatch = 0, refusals = 0;
  for (size_t i = 0; i < data->rows.size(); ++i) {
    const nlohmann::json& c = ref["cases"][i];
    const std::string config = c.at("config").get<std::string>();
    const SamplingParams& s = params.at(config);
    const auto ids = c.at("ids").get<std::vector<int64_t>>();
    const sampling::StageContext context{ids, c.at("prompt_length").get<int64_t>(), eos};
    const auto chain_stages = sampling::preset_stages(s);
    const auto& records = c.at("stages");
    ASSERT_LE(records.size(), chain_stages.size()) << "case " << i << " (" << config << ")";
    Candidates cur(data->rows[i].data(), data->rows[i].size());
    bool refused = false;
    for (size_t k = 0; k < chain_stages.size() && !refused; ++k) {
      chain_stages[k]->apply(cur, context);
      refused = cur.finite_count() == 0;
      if (k >= records.size()) continue;
      ASSERT_EQ(chain_stages[k]->name(), records[k][0].get<std::string>()) << "case " << i << " (" << config << ") stage " << k;
      ++stages;
      if (cur.finite_count() != records[k][1].get<int64_t>() || kept_hash(cur) != records[k][2].get<std::string>()) {
        ++set_mismatch;
        ADD_FAILURE() << "case " << i << " (" << config << ", " << cur.size << " tokens) stage " << chain_stages[k]->name() << ": kept "
                      << cur.finite_count() << ", the reference " << records[k][1];
      }
      if (bits_hash(cur) != records[k][3].get<std::string>()) ++bit_mismatch;
    }
    if (c.at("token").is_null()) {
      EXPECT_TRUE(refused) << "case " << i << " (" << config << "): Hugging Face refused it, the plain chain did not";
      ++refusals;
      continue;
    }
    ASSERT_FALSE(refused) << "case " << i;
    const auto drawn = draws.at(config)->draw(cur, true);
    ++picks;
    if (drawn->token != c.at("token").get<int64_t>()) {
      ++pick_mismatch;
      ADD_FAILURE() << "case " << i << " (" << config << "): picked " << drawn->token << ", the reference " << c.at("token");
    }
  }
  EXPECT_EQ(set_mismatch, 0);
  EXPECT_EQ(bit_mismatch, 0) << "kept sets agree but some scores differ in their float32 bits";
  EXPECT_EQ(pick_mismatch, 0);
  EXPECT_GE(static_cast<int64_t>(data->rows.size()), 3000);
  RecordProperty("stages_compared", std::to_string(stages));
  RecordProperty("picks_compared", std::to_string(picks));
  std::cout << "[plain chain vs hf reference] " << data->rows.size() << " vectors, " << stages << " stages (kept set and float32 bits), "
            << picks << " picks, " << refusals << " all-masked refusals: " << set_mismatch << " / " << bit_mismatch << " / "
            << pick_mismatch << " mismatches\n";
}

TEST(PlainChainReference, LlamaCppArraysAndPicksAsLibllama) {
  const std::optional<Vectors> data = framework_vectors();
  if (!data) GTEST_SKIP() << "GENREPRO_FRAMEWORK_VECTORS is not set (ctest sets it: reference.frameworks.plain_chain_vectors)";
  const std::string cases_path = data->dir + "/llama-cases.json";
  if (!std::filesystem::exists(cases_path))
    GTEST_SKIP() << cases_path << " is missing: libllama (@node-llama-cpp/linux-x64@3.22.1, scripts/setup.sh --tests) is not installed";
  const nlohmann::json ref = nlohmann::json::parse(read_file_bytes(cases_path));
  std::map<std::string, SamplingParams> params;
  std::map<std::string, std::unique_ptr<sampling::Draw>> draws;
  for (const auto& c : ref.at("configs")) {
    const std::string name = c.at("name").get<std::string>();
    params[name] = params_of(c, Framework::llama_cpp);
    draws[name] = sampling::preset_draw(params[name]);
  }
  std::vector<const nlohmann::json*> all;
  for (const auto& c : ref.at("cases")) all.push_back(&c);
  for (const auto& c : ref.at("sweep")) all.push_back(&c);
  int64_t stages = 0, stage_mismatch = 0, picks = 0, pick_mismatch = 0, p_mismatch = 0, refusals = 0;
  for (const nlohmann::json* case_json : all) {
    const nlohmann::json& c = *case_json;
    const size_t i = c.at("vector").get<size_t>();
    const std::string config = c.at("config").get<std::string>();
    const auto ids = c.at("ids").get<std::vector<int64_t>>();
    // A fresh chain's stages with the case's history accepted, as llama.cpp accepts a prompt.
    auto chain_stages = sampling::preset_stages(params.at(config));
    for (auto& stage : chain_stages)
      for (int64_t t : ids) stage->accept(t);
    const sampling::StageContext context{ids, 1, -1};
    Candidates cur(data->rows.at(i).data(), data->rows[i].size());
    size_t next = 0;  // the reference lists every sampler of the chain, no-ops included; the preset runs the others
    for (const auto& record : c.at("stages")) {
      const std::string name = record[0].get<std::string>();
      if (next < chain_stages.size() && chain_stages[next]->name() == name) chain_stages[next++]->apply(cur, context);
      ++stages;
      if (cur.size != record[1].get<size_t>() || cur.finite_count() != record[2].get<int64_t>() || cur.sorted != record[3].get<bool>() ||
          array_hash(cur) != record[4].get<std::string>()) {
        ++stage_mismatch;
        ADD_FAILURE() << "case " << i << " (" << config << ") after " << name << ": size " << cur.size << "; llama.cpp " << record;
      }
    }
    ASSERT_EQ(next, chain_stages.size()) << "case " << i << " (" << config << "): a stage the reference did not run";
    if (c.at("token").is_null()) {
      EXPECT_EQ(cur.finite_count(), 0) << "case " << i;
      ++refusals;
      continue;
    }
    const auto drawn = draws.at(config)->draw(cur, true);
    ++picks;
    if (cur.selected != c.at("selected").get<int64_t>() || drawn->token != c.at("token").get<int64_t>()) {
      ++pick_mismatch;
      ADD_FAILURE() << "case " << i << " (" << config << "): picked " << drawn->token << ", llama.cpp " << c.at("token");
    }
    if (p_hash(cur) != c.at("p_hash").get<std::string>()) ++p_mismatch;
  }
  EXPECT_EQ(stage_mismatch, 0);
  EXPECT_EQ(pick_mismatch, 0);
  EXPECT_EQ(p_mismatch, 0) << "the picks agree but some p differ in their float32 bits";
  RecordProperty("stages_compared", std::to_string(stages));
  RecordProperty("picks_compared", std::to_string(picks));
  std::cout << "[plain chain vs llama.cpp reference] " << all.size() << " cases, " << stages << " samplers (array, order and bits), "
            << picks << " picks, " << refusals << " all-masked: " << stage_mismatch << " / " << pick_mismatch << " / " << p_mismatch
            << " mismatches\n";
}

TEST(PlainChainReference, ArticlePicksAsTheArticlesPyTorchCode) {
  const char* path = std::getenv("GENREPRO_ARTICLE_FIXED_LOGITS");
  if (path == nullptr || *path == '\0')
    GTEST_SKIP() << "GENREPRO_ARTICLE_FIXED_LOGITS is not set (ctest sets it: reference.article_fixed_logits.plain_chain)";
  const nlohmann::json ref = nlohmann::json::parse(read_file_bytes(path));
  std::vector<std::vector<float>> vectors;
  for (const auto& v : ref.at("logits")) {  // float32 values stored exactly as doubles
    std::vector<float> row;
    for (double x : v.get<std::vector<double>>()) row.push_back(static_cast<float>(x));
    vectors.push_back(std::move(row));
  }
  const int rounds = ref.at("rounds").get<int>();
  // The stages are a pure function of (logits, T, p): their candidates are made once per (T, p)
  // and drawn from by every seed and rng, as the Python side does.
  std::map<std::pair<double, double>, std::vector<Candidates>> filtered;
  int64_t compared = 0;
  for (const auto& c : ref.at("cases")) {
    SamplingParams s;
    s.mode = DecodeMode::sample;
    s.temperature = c.at("temperature").get<double>();
    s.top_p = c.at("top_p").get<double>();
    s.seed = c.at("seed").get<uint64_t>();
    const auto expected = c.at("picks").get<std::vector<int64_t>>();
    std::vector<Candidates>& rows = filtered[{s.temperature, s.top_p}];
    if (rows.empty()) {
      for (const auto& v : vectors) {
        Candidates cur(v.data(), v.size());
        for (const auto& stage : sampling::preset_stages(s)) stage->apply(cur, {{}, 0, -1});
        rows.push_back(cur);
      }
    }
    for (Rng rng : kRngs) {
      s.rng = rng;
      const auto draw = sampling::preset_draw(s);  // one generator per case, as the article's rng
      std::vector<int64_t> picks;
      for (int r = 0; r < rounds; ++r)
        for (Candidates cur : rows) picks.push_back(draw->draw(cur, true)->token);
      EXPECT_EQ(picks, expected) << "T " << s.temperature << " p " << s.top_p << " seed " << s.seed << " rng " << to_string(rng);
      compared += static_cast<int64_t>(picks.size());
    }
  }
  EXPECT_EQ(compared, 6 * 15 * 2 * 7 * 2);  // (T, p) cases x seeds x rounds x vectors, each rng
  RecordProperty("draws_compared", std::to_string(compared));
}

}  // namespace
}  // namespace genrepro::test
