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

// Whose decoding controls a run uses (docs/sampling.md): the article's loop (temperature, top-k,
// top-p; the default, and every run that names no framework), Hugging Face generate()'s logits processors
// and warpers, or llama.cpp's sampler chain. Each framework has its own stages, rules, order, RNG
// and defaults (params/framework_params.hpp).
enum class Framework { article, hf, llama_cpp };
inline constexpr std::array<Framework, 3> kFrameworks = {Framework::article, Framework::hf, Framework::llama_cpp};

// Whose forward pass computes a run's logits (docs/engines.md): genrepro's own (libtorch or
// strict numerics), or llama.cpp's, through its C API on the model exported as GGUF. The sampler
// chain, the draw and the record are the framework's, whichever engine made the logits.
enum class Engine { genrepro, llama_cpp };
inline constexpr std::array<Engine, 2> kEngines = {Engine::genrepro, Engine::llama_cpp};

// A stage of the sampler chain (docs/sampling.md). The article's chain has the first three
// (kSamplerStages: logits / T, Hugging Face's top-k, top-p); the frameworks' chains name theirs
// with the rest (params/framework_params.hpp: kHfOrder, kLlamaCppOrder).
enum class SamplerStage {
  temperature, top_k, top_p,
  // Hugging Face's logits processors (on the logits, before the warpers) and warpers.
  sequence_bias, repetition_penalty, no_repeat_ngram_size, bad_words_ids, min_length, min_new_tokens, suppress_tokens,
  min_p, typical_p, epsilon_cutoff, eta_cutoff,
  // llama.cpp's samplers (temperature, top_k, top_p, min_p, typical_p are shared names).
  logit_bias, penalties, top_n_sigma, dist,
};
inline constexpr std::array<SamplerStage, 3> kSamplerStages = {SamplerStage::temperature, SamplerStage::top_k,
                                                               SamplerStage::top_p};

// Which rule the top_p stage applies: the article's top_p_filter or Hugging Face's TopPLogitsWarper
// (kTopPRules, the article chain's choice), or llama.cpp's top-p sampler (its framework's only rule).
enum class TopPRule { article, hf, llama_cpp };
inline constexpr std::array<TopPRule, 2> kTopPRules = {TopPRule::article, TopPRule::hf};

// Which draw picks a sampled token: torch::multinomial or the portable race over std::mt19937
// (kRngs, the article's and Hugging Face's), or llama.cpp's dist sampler (an inverse-CDF scan over
// the candidates in their current order, std::mt19937 seeded as llama_sampler_init_dist(seed)).
enum class Rng { torch, portable, llama_cpp };
inline constexpr std::array<Rng, 2> kRngs = {Rng::torch, Rng::portable};

// llama.cpp's logit_bias entry: `bias` is added to the token's logit (-infinity masks it).
struct TokenBias {
  int64_t token = 0;
  double bias = 0;
};

// Hugging Face's sequence_bias entry: `bias` is added to the last token of `tokens` whenever the
// tokens before it end the sequence so far (a one-token sequence: always).
struct SequenceBias {
  std::vector<int64_t> tokens;
  double bias = 0;
};

// A token or token sequence of a list control given as text: `"bad_words_ids": ["the
// cat"]`. Parsing keeps the text (the params layer has no tokenizer); plan_runs and generate encode
// it by the framework's rule (control_text_rule) and put the ids in the control's list, where the
// engine, diff and bless read them as if they had been written as ids. The evidence records both
// (params.control_texts), so it says where every id came from.
struct ControlText {
  std::string control;       // suppress_tokens, bad_words_ids, sequence_bias or logit_bias
  int64_t entry = 0;         // the index, in the control's list, of the entry the text became
  std::string text;
  // Empty until encoded (a text never encodes to nothing: that is refused). Then the entry holds
  // them: one id for suppress_tokens, the sequence for bad_words_ids and sequence_bias, and for
  // logit_bias ids.size() entries from `entry` on, one per token with the text's bias (llama.cpp
  // biases every token of a string).
  std::vector<int64_t> ids;
};

// The controls only the frameworks have (docs/sampling.md has each one's exact rule). For an
// article run they keep these values, which mean "off", and are never written; for an hf or
// llama.cpp run every value of that framework is resolved (its defaults filled in,
// params/framework_params.hpp) and written, so a run id never depends on a default.
struct FrameworkControls {
  // Shared names, each framework's rule.
  double min_p = 0;      // 0 = off. hf: on probabilities after temperature; llama.cpp: logit >= max + ln p
  double typical_p = 1;  // 1 = off
  // Hugging Face generate().
  double repetition_penalty = 1;                  // 1 = off; > 0
  int64_t no_repeat_ngram_size = 0;               // 0 = off
  std::vector<std::vector<int64_t>> bad_words_ids;  // token sequences never completed
  std::vector<SequenceBias> sequence_bias;
  std::vector<int64_t> suppress_tokens;
  int64_t min_new_tokens = 0;  // EOS masked until this many new tokens
  int64_t min_length = 0;      // EOS masked until the sequence (prompt included) is this long
  double epsilon_cutoff = 0;   // 0 = off; in [0, 1)
  double eta_cutoff = 0;       // 0 = off; in [0, 1)
  // llama.cpp (common_params_sampling's names as its server takes them).
  int64_t repeat_last_n = 64;    // the penalties' window; 0 = off, -1 = the whole context
  double repeat_penalty = 1;     // 1 = off
  double frequency_penalty = 0;
  double presence_penalty = 0;
  std::vector<TokenBias> logit_bias;
  double top_n_sigma = -1;       // <= 0 = off
  double dynatemp_range = 0;     // 0 = plain temperature
  double dynatemp_exponent = 1;
  int64_t min_keep = 0;
  // The list entries given as text, in control_keys() order, then by entry (empty: all ids).
  std::vector<ControlText> texts;
};

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
  // Whose controls, and the controls only the frameworks have.
  Framework framework = Framework::article;
  FrameworkControls controls;
};

struct RunParams {
  SamplingParams sampling;
  int64_t max_new_tokens = 50;  // 0 = record only the first prediction, pick nothing
  bool stop_at_eos = true;
  bool use_cache = false;       // false = the article's use_cache=False: recompute every step
  int64_t top_candidates = 5;   // how many candidates each step record lists
  // The k-th copy of an otherwise identical run (an entry's "replicas": N gives copies
  // 0 .. N-1). Copy 0 is the run itself and writes no replica, so its id is the run's id; the
  // engine never reads it: copies differ only where the arithmetic around them (a batch) does.
  int64_t replica = 0;
  Engine engine = Engine::genrepro;
};

// The names written in experiment files and evidence: "greedy", "temperature", "hf", "portable".
const char* to_string(DecodeMode m);
const char* to_string(SamplerStage s);
const char* to_string(TopPRule r);
const char* to_string(Rng r);
const char* to_string(Framework f);  // "article", "hf", "llama.cpp"
const char* to_string(Engine e);     // "genrepro", "llama.cpp"

// A name back to its value; empty for anything that is not exactly one of the names. Messages
// for a rejected name are made in one place: sampling_params.hpp (check_top_p_rule, ...).
std::optional<SamplerStage> parse_sampler_stage(const std::string& name);
std::optional<TopPRule> parse_top_p_rule(const std::string& name);
std::optional<Rng> parse_rng(const std::string& name);
std::optional<Framework> parse_framework(const std::string& name);
std::optional<Engine> parse_engine(const std::string& name);

// The stages' names in order: {"top_p", "temperature"}.
std::vector<std::string> stage_names(const std::vector<SamplerStage>& order);

}  // namespace genrepro
