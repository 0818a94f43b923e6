// framework "llama.cpp" against llama.cpp's own samplers (libllama of @node-llama-cpp/linux-x64
// 3.22.1, driven through its C API by tests/reference/llama_cpp_sampling.py): the 3,000 vectors of
// hf_processors.py, each through one of 18 configurations, then each once more through one of 10
// top-n-sigma / dynamic-temperature (temp_ext) configurations, 1,500 vectors each. After every
// sampler the candidate array must be llama.cpp's: its size, its sorted flag, its finite count, and
// every (id, logit bits) in its order (the order is what dist scans); then dist's pick from a
// generator seeded per configuration, and every candidate's p to the bit. The whole chain as the
// engine runs it (RunChain, what `generate --framework llama.cpp` runs) must pick the same tokens. ctest
// runs this suite as reference.frameworks.llama_cpp_vectors, after reference.frameworks.vectors
// wrote $GENREPRO_FRAMEWORK_VECTORS/llama-cases.json.
#include <cstdlib>
#include <iostream>
#include <limits>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "engine/run_chain.hpp"
#include "sampling/llama_cpp_chain.hpp"
#include "unit/engine/framework_reference.hpp"
#include "util/errors.hpp"
#include "support/torch_rows.hpp"

namespace genrepro::test {
namespace {

std::string array_hash(const llama_cpp::Candidates& a) {
  WordHash h;
  for (size_t i = 0; i < a.size; ++i) h.add((uint64_t{static_cast<uint32_t>(a.data[i].id)} << 32) | float_bits(a.data[i].logit));
  return h.str();
}

std::string p_hash(const llama_cpp::Candidates& a) {
  WordHash h;
  for (size_t i = 0; i < a.size; ++i) h.add(float_bits(a.data[i].p));
  return h.str();
}

// One sampler of llama.cpp's chain, as common_sampler_init configures it (no-ops included).
void apply(const std::string& name, const SamplingParams& s, llama_cpp::Candidates& cur, const std::vector<int64_t>& ids,
           std::vector<llama_cpp::Candidate>& scratch) {
  const FrameworkControls& c = s.controls;
  const size_t min_keep = static_cast<size_t>(c.min_keep);
  if (name == "logit_bias") {
    std::vector<std::pair<int32_t, float>> biases;
    for (const TokenBias& b : c.logit_bias) biases.emplace_back(static_cast<int32_t>(b.token), static_cast<float>(b.bias));
    llama_cpp::logit_bias(cur, biases);
  } else if (name == "penalties") {
    llama_cpp::penalties(cur, llama_cpp::penalty_window(ids, c.repeat_last_n), static_cast<float>(c.repeat_penalty),
                         static_cast<float>(c.frequency_penalty), static_cast<float>(c.presence_penalty));
  } else if (name == "top_n_sigma") {
    llama_cpp::top_n_sigma(cur, static_cast<float>(c.top_n_sigma));
  } else if (name == "top_k") {
    llama_cpp::top_k(cur, static_cast<int32_t>(s.top_k));
  } else if (name == "typical_p") {
    llama_cpp::typical(cur, static_cast<float>(c.typical_p), min_keep);
  } else if (name == "top_p") {
    llama_cpp::top_p(cur, static_cast<float>(s.top_p), min_keep, scratch);
  } else if (name == "min_p") {
    llama_cpp::min_p(cur, static_cast<float>(c.min_p), min_keep);
  } else if (name == "temperature") {
    llama_cpp::temp_ext(cur, static_cast<float>(s.temperature), static_cast<float>(c.dynatemp_range),
                        static_cast<float>(c.dynatemp_exponent));
  } else {
    throw std::runtime_error("unknown stage " + name);
  }
}

TEST(LlamaCppReference, EverySamplerAndEveryPickAsLibllamaOnThousandsOfVectors) {
  const char* dir = std::getenv("GENREPRO_FRAMEWORK_VECTORS");
  if (dir == nullptr) GTEST_SKIP() << "GENREPRO_FRAMEWORK_VECTORS is not set (ctest sets it: reference.frameworks.llama_cpp_vectors)";
  const std::string cases_path = std::string(dir) + "/llama-cases.json";
  if (!std::filesystem::exists(cases_path))
    GTEST_SKIP() << cases_path << " is missing: libllama (@node-llama-cpp/linux-x64@3.22.1, scripts/setup.sh --tests) is not installed";
  const nlohmann::json hf = nlohmann::json::parse(read_file_bytes(std::string(dir) + "/cases.json"));
  const nlohmann::json ref = nlohmann::json::parse(read_file_bytes(cases_path));
  std::vector<int64_t> sizes;
  for (const auto& c : hf.at("cases")) sizes.push_back(c.at("size").get<int64_t>());
  const auto vectors = read_vectors(std::string(dir) + "/vectors.f32", sizes);

  std::map<std::string, SamplingParams> params;
  std::map<std::string, std::unique_ptr<llama_cpp::Dist>> dists;
  std::map<std::string, std::unique_ptr<RunChain>> samplers;  // one generator per configuration
  std::map<std::string, std::vector<std::string>> orders;
  for (const auto& c : ref.at("configs")) {
    const std::string name = c.at("name").get<std::string>();
    params[name] = params_of(c, Framework::llama_cpp);
    ASSERT_TRUE(check_run_params(RunParams{params[name], 50, true, false, 5}).empty()) << name;
    dists[name] = std::make_unique<llama_cpp::Dist>(static_cast<uint32_t>(params[name].seed));
    samplers[name] = std::make_unique<RunChain>(params[name], std::vector<int64_t>{}, -1, torch_row_math());
    for (SamplerStage st : params[name].sampler_order)
      if (st != SamplerStage::dist && (st != SamplerStage::logit_bias || !params[name].controls.logit_bias.empty()))
        orders[name].push_back(to_string(st));
  }

  int64_t stages = 0, stage_mismatch = 0, picks = 0, pick_mismatch = 0, p_mismatch = 0, sampler_mismatch = 0;
  int64_t sigma_vectors = 0, dynatemp_vectors = 0;
  std::vector<llama_cpp::Candidate> scratch;
  // "cases": vector i through configuration i mod 18; "sweep": every vector once more, through a
  // top-n-sigma or a dynamic-temperature configuration.
  std::vector<const nlohmann::json*> all;
  for (const auto& c : ref.at("cases")) all.push_back(&c);
  for (const auto& c : ref.at("sweep")) all.push_back(&c);
  ASSERT_EQ(ref.at("cases").size(), vectors.size());
  ASSERT_EQ(ref.at("sweep").size(), vectors.size());
  for (size_t n = 0; n < all.size(); ++n) {
    const nlohmann::json& c = *all[n];
    const size_t i = c.at("vector").get<size_t>();
    ASSERT_LT(i, vectors.size());
    const std::string config = c.at("config").get<std::string>();
    const SamplingParams& s = params.at(config);
    sigma_vectors += static_cast<float>(s.controls.top_n_sigma) > 0.0f ? 1 : 0;
    dynatemp_vectors += s.controls.dynatemp_range > 0 ? 1 : 0;
    const auto ids = c.at("ids").get<std::vector<int64_t>>();
    llama_cpp::Candidates cur(vectors[i].data(), vectors[i].size());
    const auto& records = c.at("stages");
    ASSERT_EQ(records.size(), orders.at(config).size()) << "case " << i;
    for (size_t k = 0; k < records.size(); ++k) {
      const std::string name = records[k][0].get<std::string>();
      ASSERT_EQ(name, orders.at(config)[k]) << "case " << i;
      apply(name, s, cur, ids, scratch);
      ++stages;
      const bool same = cur.size == records[k][1].get<size_t>() && cur.finite_count() == records[k][2].get<int64_t>() &&
                        cur.sorted == records[k][3].get<bool>() && array_hash(cur) == records[k][4].get<std::string>();
      if (!same) {
        ++stage_mismatch;
        ADD_FAILURE() << "case " << i << " (" << config << ", " << vectors[i].size() << " tokens) after " << name << ": size "
                      << cur.size << " finite " << cur.finite_count() << " sorted " << cur.sorted << "; llama.cpp " << records[k];
      }
    }
    RunChain& sampler = *samplers.at(config);
    sampler.restart(ids, 1);
    if (c.at("token").is_null()) {
      EXPECT_THROW(sampler.step(vectors[i], static_cast<int64_t>(i), true), NumericsError) << "case " << i;
      continue;
    }
    dists.at(config)->apply(cur);
    ++picks;
    if (cur.selected != c.at("selected").get<int64_t>() || cur.data[cur.selected].id != c.at("token").get<int32_t>()) {
      ++pick_mismatch;
      ADD_FAILURE() << "case " << i << " (" << config << "): picked " << cur.data[cur.selected].id << ", llama.cpp " << c.at("token");
    }
    if (p_hash(cur) != c.at("p_hash").get<std::string>()) ++p_mismatch;
    // The whole chain as `generate --framework llama.cpp` runs it.
    const RunStep step = sampler.step(vectors[i], static_cast<int64_t>(i), true);
    if (*step.token != c.at("token").get<int64_t>()) {
      ++sampler_mismatch;
      ADD_FAILURE() << "case " << i << " (" << config << "): the sampler picked " << *step.token << ", llama.cpp " << c.at("token");
    }
  }
  EXPECT_EQ(stage_mismatch, 0);
  EXPECT_EQ(pick_mismatch, 0);
  EXPECT_EQ(p_mismatch, 0) << "the picks agree but some p differ in their float32 bits";
  EXPECT_EQ(sampler_mismatch, 0);
  EXPECT_GE(static_cast<int64_t>(vectors.size()), 3000);
  // top-n-sigma and temp_ext's dynamic temperature, each on thousands of vectors.
  EXPECT_GE(sigma_vectors, 1800);
  EXPECT_GE(dynatemp_vectors, 1600);
  RecordProperty("vectors", std::to_string(vectors.size()));
  RecordProperty("stages_compared", std::to_string(stages));
  RecordProperty("picks_compared", std::to_string(picks));
  std::cout << "[llama.cpp reference] " << vectors.size() << " vectors (" << all.size() << " cases; top-n-sigma on " << sigma_vectors
            << ", dynamic temperature on " << dynatemp_vectors << "), " << stages << " samplers (array, order and bits), " << picks
            << " picks (and the whole sampler's): " << stage_mismatch << " / " << pick_mismatch << " / " << p_mismatch << " / "
            << sampler_mismatch << " mismatches\n";
}

}  // namespace
}  // namespace genrepro::test
