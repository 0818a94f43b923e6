// GPT-2's forward pass, float32 on CPU, transcribing Hugging Face's eager GPT2LMHeadModel
// (transformers/models/gpt2/modeling_gpt2.py, attn_implementation="eager") op for op, so that the
// same libtorch kernels see the same operands in the same order. Shapes in comments use
// N = tokens fed now, T = tokens attended to (cached + new), C = n_embd, H = n_head,
// D = head_dim, V = vocab_size, F = MLP width (4C).
#include "engine/gpt2_model.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "util/errors.hpp"
#include "model/gpt2_tensors.hpp"
#include "model/safetensors.hpp"

namespace genrepro {

namespace {

// math.sqrt(2.0 / math.pi) in NewGELUActivation; the digits of pi that round to Python's math.pi.
constexpr double kPi = 3.14159265358979323846;
// NewGELUActivation's cubic coefficient (Hendrycks & Gimpel's tanh approximation).
constexpr double kGeluCubic = 0.044715;

// The tensor as a float32 torch tensor owning its memory (copied out of the mapping, upcasting
// F16 / BF16). memcpy rather than from_blob: the mapping gives no alignment guarantee for floats.
torch::Tensor load_f32(const SafetensorsFile& file, const TensorInfo& info) {
  torch::Tensor out = torch::empty(info.shape, torch::kFloat32);
  const size_t bytes = static_cast<size_t>(info.numel()) * sizeof(float);
  if (info.dtype == TensorDType::F32) {
    std::memcpy(out.data_ptr<float>(), file.data(info), bytes);
  } else {
    const std::vector<float> upcast = file.to_f32(info);
    std::memcpy(out.data_ptr<float>(), upcast.data(), bytes);
  }
  return out;
}

// Loads one tensor by its Hugging Face name (with or without the "transformer." prefix).
// check_gpt2_tensors has already checked that it exists with the shape config.json implies.
torch::Tensor load_named(const SafetensorsFile& file, const std::string& hf_name) {
  return load_f32(file, file.info(find_tensor_name(file, hf_name)));
}

}  // namespace

Gpt2Model Gpt2Model::load(const ModelFiles& files) {
  Gpt2Model m;
  m.config_ = read_gpt2_config(files.config);
  m.config_path_ = files.config;
  const SafetensorsFile file = SafetensorsFile::open(files.weights);
  // Every tensor's presence and shape against config.json, before any is copied.
  check_gpt2_tensors(file, m.config_);

  m.wte_ = load_named(file, "wte.weight");  // [V, C]
  m.wpe_ = load_named(file, "wpe.weight");  // [n_positions, C]
  m.h_.resize(static_cast<size_t>(m.config_.n_layer));
  for (int64_t i = 0; i < m.config_.n_layer; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    Block& b = m.h_[static_cast<size_t>(i)];
    b.ln_1_weight = load_named(file, p + "ln_1.weight");                // [C]
    b.ln_1_bias = load_named(file, p + "ln_1.bias");                    // [C]
    b.attn_c_attn_weight = load_named(file, p + "attn.c_attn.weight");  // [C, 3C]
    b.attn_c_attn_bias = load_named(file, p + "attn.c_attn.bias");      // [3C]
    b.attn_c_proj_weight = load_named(file, p + "attn.c_proj.weight");  // [C, C]
    b.attn_c_proj_bias = load_named(file, p + "attn.c_proj.bias");      // [C]
    b.ln_2_weight = load_named(file, p + "ln_2.weight");                // [C]
    b.ln_2_bias = load_named(file, p + "ln_2.bias");                    // [C]
    b.mlp_c_fc_weight = load_named(file, p + "mlp.c_fc.weight");        // [C, F]
    b.mlp_c_fc_bias = load_named(file, p + "mlp.c_fc.bias");            // [F]
    b.mlp_c_proj_weight = load_named(file, p + "mlp.c_proj.weight");    // [F, C]
    b.mlp_c_proj_bias = load_named(file, p + "mlp.c_proj.bias");        // [C]
    // h.{i}.attn.bias / h.{i}.attn.masked_bias are the causal-mask buffers HF registers; the mask
    // is rebuilt in attention(), as HF itself does, so the stored copies are not read.
  }
  m.ln_f_weight_ = load_named(file, "ln_f.weight");  // [C]
  m.ln_f_bias_ = load_named(file, "ln_f.bias");      // [C]
  return m;
}

const Gpt2Config& Gpt2Model::config() const { return config_; }

void Gpt2Model::check_ids(const std::vector<int64_t>& ids, int64_t past_length) const {
  if (ids.empty()) {
    throw UsageError("GPT-2 forward: no token ids to feed; the model needs at least one token "
                     "(give a non-empty prompt)");
  }
  const int64_t total = past_length + static_cast<int64_t>(ids.size());
  if (total > config_.n_positions) {
    throw UsageError("GPT-2 forward: a sequence of " + std::to_string(total) + " tokens exceeds the context of " +
                     config_path_ + " (n_positions " + std::to_string(config_.n_positions) +
                     "); feed at most " + std::to_string(config_.n_positions) +
                     " tokens (shorten the prompt or lower --max-new-tokens)");
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= config_.vocab_size) {
      throw UsageError("GPT-2 forward: token id " + std::to_string(ids[i]) + " at position " +
                       std::to_string(past_length + static_cast<int64_t>(i)) + " is outside the vocabulary of " +
                       config_path_ + " (vocab_size " + std::to_string(config_.vocab_size) +
                       "); ids must be in [0, " + std::to_string(config_.vocab_size - 1) + "]");
    }
  }
}

torch::Tensor Gpt2Model::forward(const std::vector<int64_t>& ids) const {
  check_ids(ids, 0);
  return run(ids, nullptr);
}

torch::Tensor Gpt2Model::forward_cached(KvCache& cache, const std::vector<int64_t>& new_ids) const {
  const bool fresh = cache.keys.empty() && cache.values.empty() && cache.length == 0;
  const bool ours = cache.keys.size() == static_cast<size_t>(config_.n_layer) &&
                    cache.values.size() == static_cast<size_t>(config_.n_layer) && cache.length > 0;
  if (!fresh && !ours) {
    throw std::invalid_argument("Gpt2Model::forward_cached: the KvCache was not filled by this model");
  }
  check_ids(new_ids, cache.length);
  if (fresh) {
    cache.keys.resize(static_cast<size_t>(config_.n_layer));
    cache.values.resize(static_cast<size_t>(config_.n_layer));
  }
  torch::Tensor logits = run(new_ids, &cache);
  cache.length += static_cast<int64_t>(new_ids.size());
  return logits;
}

torch::Tensor Gpt2Model::run(const std::vector<int64_t>& ids, KvCache* cache) const {
  torch::NoGradGuard no_grad;
  const int64_t N = static_cast<int64_t>(ids.size());
  const int64_t past = cache != nullptr ? cache->length : 0;
  const int64_t C = config_.n_embd;

  // input_ids, position_ids = arange(past, past + N)                                 [N], [N]
  const torch::Tensor input_ids = torch::tensor(ids, torch::kLong);
  const torch::Tensor position_ids = torch::arange(past, past + N, torch::kLong);
  // hidden_states = wte(input_ids) + wpe(position_ids)                                [N, C]
  torch::Tensor x = torch::embedding(wte_, input_ids) + torch::embedding(wpe_, position_ids);

  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const Block& b = h_[static_cast<size_t>(i)];
    // residual = x; x = ln_1(x); x = attn(x) + residual                               [N, C]
    const torch::Tensor a = torch::layer_norm(x, {C}, b.ln_1_weight, b.ln_1_bias, config_.layer_norm_epsilon);
    x = attention(b, a, i, cache) + x;
    // residual = x; x = ln_2(x); x = residual + mlp(x)                                [N, C]
    const torch::Tensor m = torch::layer_norm(x, {C}, b.ln_2_weight, b.ln_2_bias, config_.layer_norm_epsilon);
    x = x + mlp(b, m);
  }
  // ln_f                                                                              [N, C]
  x = torch::layer_norm(x, {C}, ln_f_weight_, ln_f_bias_, config_.layer_norm_epsilon);
  // lm_head = Linear(C, V, bias=False) tied to wte: logits = x @ wte^T                 [N, V]
  return torch::linear(x, wte_);
}

torch::Tensor Gpt2Model::attention(const Block& b, const torch::Tensor& x, int64_t layer, KvCache* cache) const {
  const int64_t N = x.size(0);
  const int64_t C = config_.n_embd;
  const int64_t H = config_.n_head;
  const int64_t D = config_.head_dim();

  // c_attn (Conv1D): addmm(bias, x, W), W [C, 3C]                                    [N, 3C]
  const torch::Tensor qkv = torch::addmm(b.attn_c_attn_bias, x, b.attn_c_attn_weight);
  // query, key, value = qkv.split(C, dim=-1)                                     3 x [N, C]
  const std::vector<torch::Tensor> parts = qkv.split(C, /*dim=*/1);
  // view(N, H, D).transpose: one row of D per head and token (views, as in HF)   [H, N, D]
  const torch::Tensor q = parts[0].view({N, H, D}).transpose(0, 1);
  torch::Tensor k = parts[1].view({N, H, D}).transpose(0, 1);
  torch::Tensor v = parts[2].view({N, H, D}).transpose(0, 1);

  if (cache != nullptr) {
    const size_t l = static_cast<size_t>(layer);
    // key = cat(past_key, key, dim=-2), likewise value (HF's DynamicCache.update)   [H, T, D]
    if (cache->length > 0) {
      k = torch::cat({cache->keys[l], k}, /*dim=*/1);
      v = torch::cat({cache->values[l], v}, /*dim=*/1);
    }
    cache->keys[l] = k;
    cache->values[l] = v;
  }
  const int64_t T = k.size(1);

  // attn_weights = q @ k^T                                                            [H, N, T]
  torch::Tensor scores = torch::matmul(q, k.transpose(-1, -2));
  if (config_.scale_attn_weights) {
    // attn_weights / torch.full([], value.size(-1) ** 0.5): a float32 0-dim tensor holding
    // Python's pow(D, 0.5) rounded to float, divided (not multiplied by a reciprocal).
    scores = scores / torch::full({}, std::pow(static_cast<double>(D), 0.5), scores.options());
  }
  // causal mask = bias[T - N : T, :T]: query i (position T - N + i) sees keys j <= T - N + i;
  // masked scores become finfo(float32).min, not -inf, as in HF                       [N, T]
  const torch::Tensor causal = torch::ones({N, T}, torch::kBool).tril(/*diagonal=*/T - N);
  const torch::Tensor mask_value = torch::full({}, std::numeric_limits<float>::lowest(), scores.options());
  scores = torch::where(causal, scores, mask_value);                                  // [H, N, T]
  // softmax over the keys                                                             [H, N, T]
  const torch::Tensor probs = torch::softmax(scores, /*dim=*/-1);
  // attn_output = probs @ v                                                           [H, N, D]
  const torch::Tensor heads = torch::matmul(probs, v);
  // merge heads: transpose and reshape (a copy), then contiguous                     [N, C]
  const torch::Tensor merged = heads.transpose(0, 1).reshape({N, C}).contiguous();
  // c_proj (Conv1D), W [C, C]                                                         [N, C]
  return torch::addmm(b.attn_c_proj_bias, merged, b.attn_c_proj_weight);
}

torch::Tensor Gpt2Model::mlp(const Block& b, const torch::Tensor& x) const {
  // c_fc (Conv1D), W [C, F]                                                           [N, F]
  const torch::Tensor hidden = torch::addmm(b.mlp_c_fc_bias, x, b.mlp_c_fc_weight);
  // act                                                                               [N, F]
  const torch::Tensor activated = activation(hidden);
  // c_proj (Conv1D), W [F, C]                                                         [N, C]
  return torch::addmm(b.mlp_c_proj_bias, activated, b.mlp_c_proj_weight);
}

torch::Tensor Gpt2Model::activation(const torch::Tensor& x) const {
  if (config_.activation_function == "gelu_new") {
    // NewGELUActivation: 0.5 * x * (1.0 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), same op order
    return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / kPi) * (x + kGeluCubic * torch::pow(x, 3.0))));
  }
  if (config_.activation_function == "gelu") {
    // GELUActivation: nn.functional.gelu, the exact erf form
    return torch::gelu(x);
  }
  // read_gpt2_config admits only the two above; reaching here is a bug, not bad input.
  throw std::logic_error("Gpt2Model: unsupported activation_function " + config_.activation_function);
}

}  // namespace genrepro
