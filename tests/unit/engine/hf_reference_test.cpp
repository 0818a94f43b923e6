// framework "hf" against Hugging Face's processors and warpers written in plain PyTorch
// (tests/reference/hf_processors.py): 3,000 logits vectors (random, heavy-tailed, ties, -inf; 6 to
// 2,048 tokens), each through one of 18 configurations with a history of its own. After every
// stage of the engine's chain (the hf preset with libtorch's row math) the kept set (count and hash
// of the ids) and the scores themselves (a hash of their float32 bits) must be the reference's;
// then the pick of the whole chain as the engine runs it (RunChain), one generator seeded per
// configuration (torch.multinomial), or the argmax for the greedy one. ctest runs this suite as
// reference.frameworks.hf_vectors, after reference.frameworks.vectors wrote the data to
// $GENREPRO_FRAMEWORK_VECTORS.
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "engine/run_chain.hpp"
#include "engine/torch_row_math.hpp"
#include "sampling/presets.hpp"
#include "unit/engine/framework_reference.hpp"
#include "util/errors.hpp"
#include "support/torch_rows.hpp"

namespace genrepro::test {
namespace {

std::string kept_hash(const torch::Tensor& scores) {
  const torch::Tensor flat = scores.reshape({-1}).contiguous();
  const float* v = flat.data_ptr<float>();
  WordHash h;
  for (int64_t i = 0; i < flat.numel(); ++i)
    if (v[i] > -std::numeric_limits<float>::infinity()) h.add(static_cast<uint64_t>(i));
  return h.str();
}

std::string bits_hash(const torch::Tensor& scores) {
  const torch::Tensor flat = scores.reshape({-1}).contiguous();
  const float* v = flat.data_ptr<float>();
  WordHash h;
  for (int64_t i = 0; i < flat.numel(); ++i) h.add(float_bits(v[i]));
  return h.str();
}

// The scores a chain's candidate array holds, in id order (Hugging Face's stages keep it whole).
torch::Tensor scores_of(const sampling::Candidates& cur) {
  torch::Tensor out = torch::empty({static_cast<int64_t>(cur.size)}, torch::kFloat32);
  float* v = out.data_ptr<float>();
  for (size_t i = 0; i < cur.size; ++i) v[cur.data[i].id] = cur.data[i].logit;
  return out;
}

TEST(HfReference, EveryStageAndEveryPickAsHuggingFacesProcessorsOnThousandsOfVectors) {
  const char* dir = std::getenv("GENREPRO_FRAMEWORK_VECTORS");
  if (dir == nullptr) GTEST_SKIP() << "GENREPRO_FRAMEWORK_VECTORS is not set (ctest sets it: reference.frameworks.hf_vectors)";
  const nlohmann::json ref = nlohmann::json::parse(read_file_bytes(std::string(dir) + "/cases.json"));
  std::vector<int64_t> sizes;
  for (const auto& c : ref.at("cases")) sizes.push_back(c.at("size").get<int64_t>());
  const auto vectors = read_vectors(std::string(dir) + "/vectors.f32", sizes);
  const int64_t eos = ref.at("eos").get<int64_t>();

  std::map<std::string, SamplingParams> params;
  std::map<std::string, std::unique_ptr<RunChain>> samplers;  // one generator per configuration
  for (const auto& c : ref.at("configs")) {
    const std::string name = c.at("name").get<std::string>();
    params[name] = params_of(c, Framework::hf);
    ASSERT_TRUE(check_run_params(RunParams{params[name], 50, true, false, 5}).empty()) << name;
    samplers[name] = std::make_unique<RunChain>(params[name], std::vector<int64_t>{}, eos, torch_row_math());
  }

  int64_t stages = 0, stage_mismatch = 0, bit_mismatch = 0, picks = 0, pick_mismatch = 0, refusals = 0;
  for (size_t i = 0; i < vectors.size(); ++i) {
    const nlohmann::json& c = ref["cases"][i];
    const std::string config = c.at("config").get<std::string>();
    const SamplingParams& s = params.at(config);
    const auto ids = c.at("ids").get<std::vector<int64_t>>();
    const int64_t prompt_length = c.at("prompt_length").get<int64_t>();
    const torch::Tensor logits = as_tensor(vectors[i]);
    const auto chain_stages = sampling::preset_stages(s);
    sampling::Candidates cur(vectors[i].data(), vectors[i].size());
    const sampling::StageContext context{ids, prompt_length, eos, torch_row_math()};

    // Stage by stage, the functions alone.
    const bool greedy = s.mode == DecodeMode::greedy;
    const std::vector<SamplerStage> expected = active_stages(s, greedy);
    const auto& records = c.at("stages");
    ASSERT_LE(records.size(), expected.size()) << "case " << i << " (" << config << ")";
    ASSERT_EQ(chain_stages.size(), expected.size());
    for (size_t k = 0; k < records.size(); ++k) {
      const std::string name = records[k][0].get<std::string>();
      ASSERT_EQ(name, to_string(expected[k])) << "case " << i << " (" << config << ") stage " << k;
      chain_stages[k]->apply(cur, context);
      const torch::Tensor scores = scores_of(cur);
      ++stages;
      const int64_t kept = (scores > -std::numeric_limits<float>::infinity()).sum().item<int64_t>();
      const bool same_set = kept == records[k][1].get<int64_t>() && kept_hash(scores) == records[k][2].get<std::string>();
      const bool same_bits = bits_hash(scores) == records[k][3].get<std::string>();
      if (!same_set) {
        ++stage_mismatch;
        ADD_FAILURE() << "case " << i << " (" << config << ", " << vectors[i].size() << " tokens) stage " << name << ": kept "
                      << kept << ", the reference " << records[k][1];
      }
      if (!same_bits) ++bit_mismatch;
    }

    // The whole sampler: the same stages, then the pick from this configuration's generator.
    RunChain& sampler = *samplers.at(config);
    sampler.restart(ids, prompt_length);
    if (c.at("token").is_null()) {
      EXPECT_THROW(sampler.step(row_of(logits), static_cast<int64_t>(i), true), NumericsError) << "case " << i;
      ++refusals;
      continue;
    }
    const RunStep step = sampler.step(row_of(logits), static_cast<int64_t>(i), true);
    ++picks;
    if (*step.token != c.at("token").get<int64_t>()) {
      ++pick_mismatch;
      ADD_FAILURE() << "case " << i << " (" << config << "): picked " << *step.token << ", the reference " << c.at("token");
    }
    ASSERT_EQ(step.stages.size(), expected.size());
  }
  EXPECT_EQ(stage_mismatch, 0);
  EXPECT_EQ(bit_mismatch, 0) << "kept sets agree but some scores differ in their float32 bits";
  EXPECT_EQ(pick_mismatch, 0);
  EXPECT_GE(static_cast<int64_t>(vectors.size()), 3000);
  RecordProperty("vectors", std::to_string(vectors.size()));
  RecordProperty("stages_compared", std::to_string(stages));
  RecordProperty("picks_compared", std::to_string(picks));
  RecordProperty("refused_as_hf_refuses", std::to_string(refusals));
  std::cout << "[hf reference] " << vectors.size() << " vectors, " << stages << " stages (kept set and float32 bits), " << picks
            << " picks, " << refusals << " all-masked refusals: " << stage_mismatch << " / " << bit_mismatch << " / "
            << pick_mismatch << " mismatches\n";
}

}  // namespace
}  // namespace genrepro::test
