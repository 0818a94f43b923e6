#include "llama/llama_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "util/errors.hpp"
#include "util/sha256.hpp"

namespace genrepro::llama {

namespace {

namespace fs = std::filesystem;

constexpr const char* kKnownRelease = "llama.cpp release v0.5.0 (the one scripts/setup.sh --tests installs)";

// ggml_log_level: errors are kept for the message that follows a refusal; the rest (llama.cpp
// prints its whole model card at load) would bury genrepro's own lines.
constexpr int kGgmlLogError = 4;

void keep_errors(int level, const char* text, void* user_data) {
  if (level == kGgmlLogError && text != nullptr) {
    auto* last = static_cast<std::string*>(user_data);
    *last = text;
    while (!last->empty() && (last->back() == '\n' || last->back() == ' ')) last->pop_back();
  }
}

std::string library_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (!fs::exists(path, ec))
      throw UsageError("--llama-lib " + path + ": no such file or directory; pass llama.cpp's libllama.so or "
                       "the directory holding it");
    return fs::absolute(path).string();
  }
  if (fs::exists(fs::path(path) / "libllama.so", ec)) return fs::absolute(fs::path(path) / "libllama.so").string();
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libllama", 0) == 0 && name.find(".so") != std::string::npos && name.find("common") == std::string::npos)
      found.push_back(entry.path().string());
  }
  if (found.size() != 1)
    throw UsageError("--llama-lib " + path + ": " +
                     (found.empty() ? std::string("holds no libllama*.so") : "holds " + std::to_string(found.size()) + " libllama*.so files") +
                     "; pass the library file itself");
  return fs::absolute(found.front()).string();
}

template <typename F>
void bind(void* handle, const std::string& file, const char* name, F& slot) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr)
    throw UsageError("--llama-lib " + file + ": no symbol " + name + "; genrepro drives " + kKnownRelease);
  slot = reinterpret_cast<F>(symbol);
}

// The CPU backend ggml loaded: ggml picks one libggml-cpu-<variant>.so by what the CPU has, and
// the variant decides which kernels compute (different variants give different bits).
std::string loaded_cpu_backend() {
  std::string found;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const size_t slash = name.rfind('/');
        const std::string_view file = slash == std::string_view::npos ? name : name.substr(slash + 1);
        if (file.rfind("libggml-cpu", 0) == 0) *static_cast<std::string*>(data) = std::string(file);
        return 0;
      },
      &found);
  return found.empty() ? "built in" : found;
}

// A library of another release would read our structs with its own layout; its defaults, read
// back through ours, tell whether the layouts agree.
void check_abi(const std::string& file, const abi::ModelParams& m, const abi::ContextParams& c) {
  const bool model_ok = m.n_gpu_layers == -1 && m.split_mode == 1 && m.load_mode == -1 && m.lazy_mode == 1 &&
                        m.tensor_split == nullptr && m.use_extra_bufts && !m.vocab_only && !m.no_alloc;
  const bool context_ok = c.n_ctx == 512 && c.n_batch == 2048 && c.n_ubatch == 512 && c.n_seq_max == 1 &&
                          c.n_rs_seq == 0 && c.n_outputs_max_per_seq == 1 &&
                          c.flash_attn_type == abi::kFlashAttnAuto && c.yarn_ext_factor == -1.0f &&
                          c.type_k == abi::kGgmlF16 && c.type_v == abi::kGgmlF16 && c.offload_kqv && c.no_perf &&
                          c.samplers == nullptr && c.n_samplers == 0 && c.ctx_other == nullptr;
  if (!model_ok || !context_ok)
    throw UsageError("--llama-lib " + file + ": its " + (model_ok ? "llama_context_params" : "llama_model_params") +
                     " do not read back as " + kKnownRelease +
                     " declares them; genrepro cannot drive this release (another layout would be read as garbage)");
}

}  // namespace

bool valid_kv_type(const std::string& text) { return text == "f16" || text == "f32"; }
bool valid_flash_attn(const std::string& text) { return text == "auto" || text == "on" || text == "off"; }

std::shared_ptr<LlamaLibrary> LlamaLibrary::open(const std::string& path) {
  const std::string file = library_file(path);
  std::shared_ptr<LlamaLibrary> lib(new LlamaLibrary());
  // Local: llama.cpp's and ggml's symbols stay out of the global namespace genrepro's own live in.
  lib->handle_ = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib->handle_ == nullptr)
    throw UsageError("--llama-lib " + file + ": cannot load (" + std::string(::dlerror()) + ")");
  abi::Functions& f = lib->api_;
  void* h = lib->handle_;
  bind(h, file, "llama_log_set", f.log_set);
  bind(h, file, "llama_backend_init", f.backend_init);
  bind(h, file, "ggml_backend_load_all_from_path", f.load_all_from_path);
  bind(h, file, "ggml_version", f.ggml_version);
  bind(h, file, "ggml_commit", f.ggml_commit);
  bind(h, file, "llama_print_system_info", f.print_system_info);
  bind(h, file, "llama_model_default_params", f.model_default_params);
  bind(h, file, "llama_context_default_params", f.context_default_params);
  bind(h, file, "llama_model_load_from_file", f.model_load_from_file);
  bind(h, file, "llama_model_free", f.model_free);
  bind(h, file, "llama_init_from_model", f.init_from_model);
  bind(h, file, "llama_free", f.free);
  bind(h, file, "llama_model_get_vocab", f.model_get_vocab);
  bind(h, file, "llama_vocab_n_tokens", f.vocab_n_tokens);
  bind(h, file, "llama_model_n_ctx_train", f.model_n_ctx_train);
  bind(h, file, "llama_tokenize", f.tokenize);
  bind(h, file, "llama_batch_get_one", f.batch_get_one);
  bind(h, file, "llama_decode", f.decode);
  bind(h, file, "llama_get_logits_ith", f.get_logits_ith);
  bind(h, file, "llama_get_memory", f.get_memory);
  bind(h, file, "llama_memory_clear", f.memory_clear);
  bind(h, file, "llama_sampler_chain_default_params", f.chain_default_params);
  bind(h, file, "llama_sampler_chain_init", f.chain_init);
  bind(h, file, "llama_sampler_chain_add", f.chain_add);
  bind(h, file, "llama_sampler_init_greedy", f.init_greedy);
  bind(h, file, "llama_sampler_init_dist", f.init_dist);
  bind(h, file, "llama_sampler_init_top_k", f.init_top_k);
  bind(h, file, "llama_sampler_init_top_p", f.init_top_p);
  bind(h, file, "llama_sampler_init_min_p", f.init_min_p);
  bind(h, file, "llama_sampler_init_typical", f.init_typical);
  bind(h, file, "llama_sampler_init_temp_ext", f.init_temp_ext);
  bind(h, file, "llama_sampler_init_top_n_sigma", f.init_top_n_sigma);
  bind(h, file, "llama_sampler_init_penalties", f.init_penalties);
  bind(h, file, "llama_sampler_init_logit_bias", f.init_logit_bias);
  bind(h, file, "llama_sampler_apply", f.sampler_apply);
  bind(h, file, "llama_sampler_accept", f.sampler_accept);
  bind(h, file, "llama_sampler_free", f.sampler_free);

  lib->model_defaults_ = f.model_default_params().value;
  lib->context_defaults_ = f.context_default_params().value;
  check_abi(file, lib->model_defaults_, lib->context_defaults_);

  f.log_set(keep_errors, &lib->last_error_);
  f.load_all_from_path(fs::path(file).parent_path().c_str());
  f.backend_init();
  LlamaIdentity& id = lib->identity_;
  id.library = file;
  id.library_sha256 = sha256_file(file).sha256;
  id.ggml_version = f.ggml_version();
  id.ggml_commit = f.ggml_commit();
  id.cpu_backend = loaded_cpu_backend();
  id.system_info = f.print_system_info();
  while (!id.system_info.empty() && id.system_info.back() == ' ') id.system_info.pop_back();
  return lib;
}

LlamaLibrary::~LlamaLibrary() {
  // ggml's backends stay registered for the process's life: closing the library under them
  // would leave dangling pointers in ggml's registry, so it stays mapped.
}

LlamaModel::LlamaModel(std::shared_ptr<LlamaLibrary> lib, const std::string& gguf) : lib_(std::move(lib)) {
  abi::ModelParams params = lib_->model_defaults();
  params.n_gpu_layers = 0;  // CPU only, like genrepro's own engine
  model_ = lib_->api().model_load_from_file(gguf.c_str(), params);
  if (model_ == nullptr)
    throw ModelFileError(gguf + ": llama.cpp cannot load it" +
                         (lib_->last_error().empty() ? std::string() : " (" + lib_->last_error() + ")"));
}

LlamaModel::~LlamaModel() {
  if (model_ != nullptr) lib_->api().model_free(model_);
}

int64_t LlamaModel::vocab_size() const {
  return lib_->api().vocab_n_tokens(lib_->api().model_get_vocab(model_));
}

int64_t LlamaModel::context_size() const { return lib_->api().model_n_ctx_train(model_); }

std::vector<int64_t> LlamaModel::tokenize(const std::string& text) const {
  const auto& f = lib_->api();
  const void* vocab = f.model_get_vocab(model_);
  std::vector<abi::Token> tokens(text.size() + 8);
  int32_t n = f.tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                         static_cast<int32_t>(tokens.size()), false, true);
  if (n < 0) {
    tokens.resize(static_cast<size_t>(-n));
    n = f.tokenize(vocab, text.data(), static_cast<int32_t>(text.size()), tokens.data(),
                   static_cast<int32_t>(tokens.size()), false, true);
  }
  if (n < 0) throw Error("llama.cpp: llama_tokenize failed (" + std::to_string(n) + ")");
  return std::vector<int64_t>(tokens.begin(), tokens.begin() + n);
}

LlamaSession::LlamaSession(const LlamaModel& model, const LlamaSettings& settings) : model_(model) {
  const LlamaLibrary& lib = model.library();
  abi::ContextParams params = lib.context_defaults();
  params.n_ctx = static_cast<uint32_t>(model.context_size());
  params.n_batch = params.n_ctx;  // a prompt is one llama_decode, as llama-cli submits it
  params.n_threads = settings.threads;
  params.n_threads_batch = settings.threads;
  params.type_k = params.type_v = settings.kv_type == "f32" ? abi::kGgmlF32 : abi::kGgmlF16;
  params.flash_attn_type = settings.flash_attn == "on"    ? abi::kFlashAttnEnabled
                           : settings.flash_attn == "off" ? abi::kFlashAttnDisabled
                                                          : abi::kFlashAttnAuto;
  ubatch_ = params.n_ubatch;
  ctx_ = lib.api().init_from_model(model.handle(), params);
  if (ctx_ == nullptr)
    throw Error("llama.cpp: cannot create a context (" +
                (lib.last_error().empty() ? std::string("no reason given") : lib.last_error()) + ")");
}

LlamaSession::~LlamaSession() {
  if (ctx_ != nullptr) model_.library().api().free(ctx_);
}

void LlamaSession::decode(std::vector<abi::Token> tokens) {
  const auto& f = model_.library().api();
  const int32_t rc = f.decode(ctx_, f.batch_get_one(tokens.data(), static_cast<int32_t>(tokens.size())));
  if (rc != 0)
    throw Error("llama.cpp: llama_decode of " + std::to_string(tokens.size()) + " token(s) after " +
                std::to_string(decoded_.size()) + " returned " + std::to_string(rc) +
                (model_.library().last_error().empty() ? std::string() : " (" + model_.library().last_error() + ")"));
}

void LlamaSession::reset() {
  const auto& f = model_.library().api();
  f.memory_clear(f.get_memory(ctx_), true);
  decoded_.clear();
}

std::vector<float> LlamaSession::logits_after(const std::vector<int64_t>& ids, bool keep_cache) {
  const auto& f = model_.library().api();
  const bool extends = keep_cache && ids.size() > decoded_.size() && std::equal(decoded_.begin(), decoded_.end(), ids.begin());
  if (!extends) reset();
  decode(std::vector<abi::Token>(ids.begin() + static_cast<std::ptrdiff_t>(decoded_.size()), ids.end()));
  decoded_ = ids;
  const float* logits = f.get_logits_ith(ctx_, -1);
  if (logits == nullptr) throw Error("llama.cpp: llama_get_logits_ith(-1) returned no logits");
  return std::vector<float>(logits, logits + model_.vocab_size());
}

LlamaSampler::LlamaSampler(std::shared_ptr<LlamaLibrary> lib) : lib_(std::move(lib)) {
  const auto& f = lib_->api();
  chain_ = f.chain_init(f.chain_default_params());
}

LlamaSampler::~LlamaSampler() {
  if (chain_ != nullptr) lib_->api().sampler_free(chain_);
}

void LlamaSampler::add(void* sampler) {
  if (sampler == nullptr) throw Error("llama.cpp: a llama_sampler_init_* call returned no sampler");
  lib_->api().chain_add(chain_, sampler);
}

void LlamaSampler::accept(int64_t token) { lib_->api().sampler_accept(chain_, static_cast<abi::Token>(token)); }

int64_t LlamaSampler::pick(const std::vector<float>& logits) {
  // llama_sampler_sample's array: every token in id order, its logit, p 0, unsorted.
  candidates_.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) candidates_[i] = {static_cast<abi::Token>(i), logits[i], 0.0f};
  abi::TokenDataArray array{candidates_.data(), candidates_.size(), -1, false};
  lib_->api().sampler_apply(chain_, &array);
  if (array.selected < 0 || static_cast<size_t>(array.selected) >= array.size)
    throw Error("llama.cpp: its sampler chain selected no token");
  return array.data[array.selected].id;
}

}  // namespace genrepro::llama
