#pragma once
// What one generation run is asked to do: the typed parameters that experiment files and CLI
// flags are parsed into, once, and that the engine receives. Field names match the evidence JSON
// keys (docs/evidence-format.md).
#include <cstdint>
#include <string>
#include <vector>

namespace genrepro {

enum class DecodeMode { greedy, sample };

// How one token is picked. Validation lives in sampling_params.cpp (check_run_params),
// so the CLI flags and experiment files reject the same values with the same words.
struct SamplingParams {
  DecodeMode mode = DecodeMode::greedy;
  double temperature = 1.0;  // 0 means greedy; must be >= 0
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;        // in (0, 1]; 1 = off
  uint64_t seed = 0;
  // Stage names in the order they are applied to the logits. The article's and Hugging Face's
  // order is temperature, top_k, top_p; llama.cpp's default puts temperature last.
  std::vector<std::string> sampler_order = {"temperature", "top_k", "top_p"};
  std::string top_p_rule = "article";  // "article" (the article's top_p_filter) | "hf" (TopPLogitsWarper)
  std::string rng = "torch";           // "torch" (torch::multinomial) | "portable" (mt19937 race)
};

struct RunParams {
  SamplingParams sampling;
  int64_t max_new_tokens = 50;  // 0 = record only the first prediction, pick nothing
  bool stop_at_eos = true;
  bool use_cache = false;       // false = the article's use_cache=False: recompute every step
  int64_t top_candidates = 5;   // how many candidates each step record lists
};

const char* to_string(DecodeMode m);

}  // namespace genrepro
