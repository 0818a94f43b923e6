// framework "hf" against Hugging Face's processors and warpers written in plain PyTorch
// (tests/reference/hf_processors.py): 3,000 logits vectors (random, heavy-tailed, ties, -inf; 6 to
// 2,048 tokens), each through one of 18 configurations with a history of its own. After every
// stage the kept set (count and hash of the ids) and the scores themselves (a hash of their float32
// bits) must be the reference's; then the pick of a generator seeded per configuration
// (torch.multinomial), or the argmax for the greedy one. ctest runs this suite as
// reference.frameworks.hf_vectors, after reference.frameworks.vectors wrote the data to
// $GENREPRO_FRAMEWORK_VECTORS.
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "engine/framework_sampler.hpp"
#include "unit/engine/framework_reference.hpp"
#include "util/errors.hpp"

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

torch::Tensor apply_stage(const std::string& name, const SamplingParams& s, const torch::Tensor& scores,
                          const std::vector<int64_t>& ids, int64_t prompt_length, int64_t eos) {
  const FrameworkControls& c = s.controls;
  if (name == "sequence_bias") return hf::sequence_bias(scores, ids, c.sequence_bias);
  if (name == "repetition_penalty") return hf::repetition_penalty(scores, ids, c.repetition_penalty);
  if (name == "no_repeat_ngram_size") return hf::no_repeat_ngram(scores, ids, c.no_repeat_ngram_size);
  if (name == "bad_words_ids") return hf::bad_words(scores, ids, c.bad_words_ids, eos);
  if (name == "min_length") return hf::mask_eos_below(scores, static_cast<int64_t>(ids.size()), c.min_length, eos);
  if (name == "min_new_tokens")
    return hf::mask_eos_below(scores, static_cast<int64_t>(ids.size()) - prompt_length, c.min_new_tokens, eos);
  if (name == "suppress_tokens") return hf::suppress_tokens(scores, c.suppress_tokens);
  if (name == "temperature") return hf::temperature(scores, s.temperature);
  if (name == "top_k") return hf::top_k(scores, s.top_k);
  if (name == "top_p") return hf::top_p(scores, s.top_p);
  if (name == "min_p") return hf::min_p(scores, c.min_p);
  if (name == "typical_p") return hf::typical(scores, c.typical_p);
  if (name == "epsilon_cutoff") return hf::epsilon(scores, c.epsilon_cutoff);
  if (name == "eta_cutoff") return hf::eta(scores, c.eta_cutoff);
  throw std::runtime_error("unknown stage " + name);
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
  std::map<std::string, std::unique_ptr<FrameworkSampler>> samplers;  // one generator per configuration
  for (const auto& c : ref.at("configs")) {
    const std::string name = c.at("name").get<std::string>();
    params[name] = params_of(c, Framework::hf);
    ASSERT_TRUE(check_run_params(RunParams{params[name], 50, true, false, 5}).empty()) << name;
    samplers[name] = make_framework_sampler(params[name]);
  }

  int64_t stages = 0, stage_mismatch = 0, bit_mismatch = 0, picks = 0, pick_mismatch = 0, refusals = 0;
  for (size_t i = 0; i < vectors.size(); ++i) {
    const nlohmann::json& c = ref["cases"][i];
    const std::string config = c.at("config").get<std::string>();
    const SamplingParams& s = params.at(config);
    const auto ids = c.at("ids").get<std::vector<int64_t>>();
    const int64_t prompt_length = c.at("prompt_length").get<int64_t>();
    const torch::Tensor logits = as_tensor(vectors[i]);

    // Stage by stage, the functions alone.
    const bool greedy = s.mode == DecodeMode::greedy;
    const std::vector<SamplerStage> expected = active_stages(s, greedy);
    const auto& records = c.at("stages");
    ASSERT_LE(records.size(), expected.size()) << "case " << i << " (" << config << ")";
    torch::Tensor scores = logits.reshape({1, -1});
    for (size_t k = 0; k < records.size(); ++k) {
      const std::string name = records[k][0].get<std::string>();
      ASSERT_EQ(name, to_string(expected[k])) << "case " << i << " (" << config << ") stage " << k;
      scores = apply_stage(name, s, scores, ids, prompt_length, eos);
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
    const std::vector<int64_t> history = ids;
    const ChainHistory h{history, prompt_length, eos};
    if (c.at("token").is_null()) {
      EXPECT_THROW(samplers.at(config)->step(logits, h, true), NumericsError) << "case " << i;
      ++refusals;
      continue;
    }
    const FrameworkStep step = samplers.at(config)->step(logits, h, true);
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
