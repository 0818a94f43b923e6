#pragma once
// What one generation run is asked to do: the typed parameters that experiment files and CLI
// flags are parsed into, once, and that the engine receives. Field names match the evidence JSON
// keys (docs/evidence-format.md); each enum's to_string is the name written there, and its
// parse_* reads that name back (nothing else: "Torch", " torch" and "" are not names).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace genrepro {

enum class DecodeMode { greedy, sample };

// A stage of the sampler chain (docs/sampling.md): logits / T, Hugging Face's top-k, top-p.
enum class SamplerStage { temperature, top_k, top_p };
inline constexpr std::array<SamplerStage, 3> kSamplerStages = {SamplerStage::temperature, SamplerStage::top_k,
                                                               SamplerStage::top_p};

// Which rule the top_p stage applies: the article's top_p_filter or Hugging Face's TopPLogitsWarper.
enum class TopPRule { article, hf };
inline constexpr std::array<TopPRule, 2> kTopPRules = {TopPRule::article, TopPRule::hf};

// Which draw picks a sampled token: torch::multinomial or the portable race over std::mt19937.
enum class Rng { torch, portable };
inline constexpr std::array<Rng, 2> kRngs = {Rng::torch, Rng::portable};

// How one token is picked. Validation lives in sampling_params.cpp (check_run_params),
// so the CLI flags and experiment files reject the same values with the same words.
struct SamplingParams {
  DecodeMode mode = DecodeMode::greedy;
  double temperature = 1.0;  // 0 means greedy; must be >= 0
  int64_t top_k = 0;         // 0 = off
  double top_p = 1.0;        // in (0, 1]; 1 = off
  uint64_t seed = 0;
  // The stages in the order they are applied to the logits. The article's and Hugging Face's
  // order is temperature, top_k, top_p; llama.cpp's default puts temperature last.
  std::vector<SamplerStage> sampler_order = {SamplerStage::temperature, SamplerStage::top_k, SamplerStage::top_p};
  TopPRule top_p_rule = TopPRule::article;
  Rng rng = Rng::torch;
};

struct RunParams {
  SamplingParams sampling;
  int64_t max_new_tokens = 50;  // 0 = record only the first prediction, pick nothing
  bool stop_at_eos = true;
  bool use_cache = false;       // false = the article's use_cache=False: recompute every step
  int64_t top_candidates = 5;   // how many candidates each step record lists
};

// The names written in experiment files and evidence: "greedy", "temperature", "hf", "portable".
const char* to_string(DecodeMode m);
const char* to_string(SamplerStage s);
const char* to_string(TopPRule r);
const char* to_string(Rng r);

// A name back to its value; empty for anything that is not exactly one of the names. Messages
// for a rejected name are made in one place: sampling_params.hpp (check_top_p_rule, ...).
std::optional<SamplerStage> parse_sampler_stage(const std::string& name);
std::optional<TopPRule> parse_top_p_rule(const std::string& name);
std::optional<Rng> parse_rng(const std::string& name);

// The stages' names in order: {"top_p", "temperature"}.
std::vector<std::string> stage_names(const std::vector<SamplerStage>& order);

}  // namespace genrepro
