#pragma once
// The part of llama.cpp's C API (include/llama.h, ggml/include/ggml*.h) that genrepro calls,
// declared here because genrepro never builds against llama.cpp: the library is opened at run
// time (llama_library.hpp). The layouts are those of llama.cpp release v0.5.0, the one
// scripts/setup.sh installs and the tests run; a library whose defaults do not read back as that
// release's is refused before any struct is passed in (check_abi in llama_library.cpp), since a
// changed layout would otherwise be read as garbage, silently.
#include <cstddef>
#include <cstdint>

namespace genrepro::llama::abi {

using Token = int32_t;

// llama_model_params
struct ModelParams {
  void* devices;
  const void* tensor_buft_overrides;
  int32_t n_gpu_layers;
  int32_t split_mode;  // enum llama_split_mode
  int32_t load_mode;   // enum llama_load_mode
  int32_t lazy_mode;   // enum llama_lazy_mode
  int32_t main_gpu;
  const float* tensor_split;
  void* progress_callback;
  void* progress_callback_user_data;
  const void* kv_overrides;
  bool vocab_only;
  bool check_tensors;
  bool use_extra_bufts;
  bool no_host;
  bool no_alloc;
  bool load_mtp;
};

// enum llama_flash_attn_type
enum FlashAttn : int32_t { kFlashAttnAuto = -1, kFlashAttnDisabled = 0, kFlashAttnEnabled = 1 };
// enum ggml_type (the two a KV cache of float weights uses)
enum GgmlType : int32_t { kGgmlF32 = 0, kGgmlF16 = 1 };

// llama_context_params
struct ContextParams {
  uint32_t n_ctx;
  uint32_t n_batch;
  uint32_t n_ubatch;
  uint32_t n_seq_max;
  uint32_t n_rs_seq;
  uint32_t n_outputs_max;
  uint32_t n_outputs_max_per_seq;
  int32_t n_threads;
  int32_t n_threads_batch;
  int32_t ctx_type;
  int32_t rope_scaling_type;
  int32_t pooling_type;
  int32_t attention_type;
  int32_t flash_attn_type;
  float rope_freq_base;
  float rope_freq_scale;
  float yarn_ext_factor;
  float yarn_attn_factor;
  float yarn_beta_fast;
  float yarn_beta_slow;
  uint32_t yarn_orig_ctx;
  float defrag_thold;
  void* cb_eval;
  void* cb_eval_user_data;
  int32_t type_k;
  int32_t type_v;
  void* abort_callback;
  void* abort_callback_data;
  bool embeddings;
  bool offload_kqv;
  bool no_perf;
  bool op_offload;
  bool swa_full;
  bool kv_unified;
  void* samplers;
  size_t n_samplers;
  void* ctx_other;
};

// llama_batch
struct Batch {
  int32_t n_tokens;
  Token* token;
  float* embd;
  int32_t* pos;
  int32_t* n_seq_id;
  int32_t** seq_id;
  int8_t* logits;
};

// llama_token_data, llama_token_data_array, llama_logit_bias, llama_sampler_chain_params
struct TokenData {
  Token id;
  float logit;
  float p;
};
struct TokenDataArray {
  TokenData* data;
  size_t size;
  int64_t selected;
  bool sorted;
};
struct LogitBias {
  Token token;
  float bias;
};
struct ChainParams {
  bool no_perf;
};

// A struct returned by value is written through a pointer the caller passes (it is larger than
// two registers): declaring the return type with room to spare keeps a library whose struct
// grew from writing past ours, so its defaults can be read and refused.
template <typename T>
struct Padded {
  T value;
  unsigned char spare[512];
};

struct Functions {
  void (*log_set)(void (*)(int, const char*, void*), void*);
  void (*backend_init)();
  void (*load_all_from_path)(const char*);
  const char* (*ggml_version)();
  const char* (*ggml_commit)();
  const char* (*print_system_info)();
  Padded<ModelParams> (*model_default_params)();
  Padded<ContextParams> (*context_default_params)();
  void* (*model_load_from_file)(const char*, ModelParams);
  void (*model_free)(void*);
  void* (*init_from_model)(void*, ContextParams);
  void (*free)(void*);
  const void* (*model_get_vocab)(const void*);
  int32_t (*vocab_n_tokens)(const void*);
  int32_t (*model_n_ctx_train)(const void*);
  int32_t (*tokenize)(const void*, const char*, int32_t, Token*, int32_t, bool, bool);
  Batch (*batch_get_one)(Token*, int32_t);
  int32_t (*decode)(void*, Batch);
  float* (*get_logits_ith)(void*, int32_t);
  void* (*get_memory)(const void*);
  void (*memory_clear)(void*, bool);
  // llama_sampler_*
  ChainParams (*chain_default_params)();
  void* (*chain_init)(ChainParams);
  void (*chain_add)(void*, void*);
  void* (*init_greedy)();
  void* (*init_dist)(uint32_t);
  void* (*init_top_k)(int32_t);
  void* (*init_top_p)(float, size_t);
  void* (*init_min_p)(float, size_t);
  void* (*init_typical)(float, size_t);
  void* (*init_temp_ext)(float, float, float);
  void* (*init_top_n_sigma)(float);
  void* (*init_penalties)(int32_t, int32_t, float, float, float);
  void* (*init_logit_bias)(int32_t, int32_t, const LogitBias*);
  void (*sampler_apply)(void*, TokenDataArray*);
  void (*sampler_accept)(void*, Token);
  void (*sampler_free)(void*);
};

}  // namespace genrepro::llama::abi
