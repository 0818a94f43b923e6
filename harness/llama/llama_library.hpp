#pragma once
// llama.cpp as a second engine: its own forward pass on a GGUF, through its C API, from a
// libllama the user names, opened at run time (genrepro never links it or its headers). What
// decides its bits is read back and recorded: the release (ggml's version and commit), the CPU
// backend variant ggml chose for this CPU, the KV-cache type, flash attention, the threads and
// the physical batch. No libtorch here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "llama/llama_abi.hpp"
#include "llama/llama_settings.hpp"

namespace genrepro::llama {

// What the loaded library is, as recorded in evidence.
struct LlamaIdentity {
  std::string library;         // the libllama opened (absolute)
  std::string library_sha256;
  std::string ggml_version;    // ggml_version()
  std::string ggml_commit;     // ggml_commit()
  std::string cpu_backend;     // the libggml-cpu-<variant>.so ggml loaded, or "built in"
  std::string system_info;     // llama_print_system_info(): the CPU features it was built for
};

// `path`: a libllama file, or a directory holding one (libllama.so, else one libllama*.so).
// Throws UsageError naming the path and the fix when nothing loads or the library's C API is
// not the one genrepro declares (llama_abi.hpp).
class LlamaLibrary {
 public:
  static std::shared_ptr<LlamaLibrary> open(const std::string& path);
  ~LlamaLibrary();
  LlamaLibrary(const LlamaLibrary&) = delete;
  LlamaLibrary& operator=(const LlamaLibrary&) = delete;

  const LlamaIdentity& identity() const { return identity_; }
  const abi::Functions& api() const { return api_; }
  const abi::ModelParams& model_defaults() const { return model_defaults_; }
  const abi::ContextParams& context_defaults() const { return context_defaults_; }
  // The last error llama.cpp logged (it says why a load failed), or empty.
  const std::string& last_error() const { return last_error_; }

 private:
  LlamaLibrary() = default;
  void* handle_ = nullptr;
  abi::Functions api_{};
  abi::ModelParams model_defaults_{};
  abi::ContextParams context_defaults_{};
  LlamaIdentity identity_;
  std::string last_error_;
};

// A GGUF loaded by llama.cpp (weights and vocabulary).
class LlamaModel {
 public:
  // Throws ModelFileError naming the file when llama.cpp refuses it.
  LlamaModel(std::shared_ptr<LlamaLibrary> lib, const std::string& gguf);
  ~LlamaModel();
  LlamaModel(const LlamaModel&) = delete;
  LlamaModel& operator=(const LlamaModel&) = delete;

  int64_t vocab_size() const;
  int64_t context_size() const;
  // llama.cpp's tokenization of `text`, as llama-cli tokenizes a prompt for a model that adds
  // no BOS: add_special off, parse_special on, so "<|endoftext|>" in a prompt is the control
  // token, as Hugging Face's tokenizer and genrepro's read it.
  std::vector<int64_t> tokenize(const std::string& text) const;
  const LlamaLibrary& library() const { return *lib_; }
  void* handle() const { return model_; }

 private:
  std::shared_ptr<LlamaLibrary> lib_;
  void* model_ = nullptr;
};

// One llama_context: the sequence it has decoded lives in its KV cache.
class LlamaSession {
 public:
  LlamaSession(const LlamaModel& model, const LlamaSettings& settings);
  ~LlamaSession();
  LlamaSession(const LlamaSession&) = delete;
  LlamaSession& operator=(const LlamaSession&) = delete;

  // The logits [V] of the token after `ids`. With `keep_cache` and `ids` extending what this
  // session decoded last, only the new tokens are decoded (a prompt in one batch, then a token a
  // step, as llama-cli does); otherwise the cache is cleared and all of `ids` decoded in one batch
  // (the article's use_cache=False: the whole sequence each step).
  std::vector<float> logits_after(const std::vector<int64_t>& ids, bool keep_cache);
  // Forgets what was decoded: the next call decodes its whole sequence, as a fresh run.
  void reset();
  // The physical batch (n_ubatch) llama.cpp splits a decode into: it decides the prompt's bits.
  int64_t ubatch() const { return ubatch_; }

 private:
  void decode(std::vector<abi::Token> tokens);

  const LlamaModel& model_;
  void* ctx_ = nullptr;
  int64_t ubatch_ = 0;
  std::vector<int64_t> decoded_;
};

// llama.cpp's own sampler chain (llama_sampler_chain_*), built stage by stage as llama.cpp's
// common_sampler_init builds it. Picks as llama_sampler_sample does on a context's logits: every
// token in id order, p 0, unsorted, through the chain; the caller accepts the token it keeps.
class LlamaSampler {
 public:
  explicit LlamaSampler(std::shared_ptr<LlamaLibrary> lib);
  ~LlamaSampler();
  LlamaSampler(const LlamaSampler&) = delete;
  LlamaSampler& operator=(const LlamaSampler&) = delete;

  // Appends a sampler made by one of the library's llama_sampler_init_* (api()); the chain owns it.
  void add(void* sampler);
  const abi::Functions& api() const { return lib_->api(); }
  void accept(int64_t token);
  int64_t pick(const std::vector<float>& logits);

 private:
  std::shared_ptr<LlamaLibrary> lib_;
  void* chain_ = nullptr;
  // The array pick() hands the chain, kept across steps: one vocabulary-sized allocation per run,
  // not per token.
  std::vector<abi::TokenData> candidates_;
};

}  // namespace genrepro::llama
