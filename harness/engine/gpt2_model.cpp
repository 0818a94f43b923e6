// GPT-2's forward pass, float32 on CPU, transcribing Hugging Face's eager GPT2LMHeadModel
// (transformers/models/gpt2/modeling_gpt2.py, attn_implementation="eager") op for op, so that the
// same libtorch kernels see the same operands in the same order. Shapes in comments use
// N = tokens fed now, T = tokens attended to (cached + new), C = n_embd, H = n_head,
// D = head_dim, V = vocab_size, F = MLP width (4C).
#include "engine/gpt2_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
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

// The tensor as a float32 torch tensor. An aligned F32 tensor is a view of the file's read-only
// mapping, which the tensor keeps alive: no second copy of the weights (GPT-2 small: 500 MB), and
// the same values, so the same bits. Otherwise (F16 / BF16 upcast, or a misaligned offset) a copy.
torch::Tensor load_f32(const SafetensorsFile& file, const TensorInfo& info) {
  const std::byte* bytes = file.data(info);
  if (info.dtype == TensorDType::F32 && reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0) {
    std::shared_ptr<const void> mapping = file.mapping();
    // const_cast: libtorch has no read-only tensor; nothing writes weights (PROT_READ would fault).
    return torch::from_blob(const_cast<std::byte*>(bytes), info.shape, [mapping](void*) {}, torch::kFloat32);
  }
  torch::Tensor out = torch::empty(info.shape, torch::kFloat32);
  const size_t n = static_cast<size_t>(info.numel()) * sizeof(float);
  if (info.dtype == TensorDType::F32) {
    std::memcpy(out.data_ptr<float>(), bytes, n);
  } else {
    const std::vector<float> upcast = file.to_f32(info);
    std::memcpy(out.data_ptr<float>(), upcast.data(), n);
  }
  return out;
}

// Loads one tensor by its Hugging Face name (with or without the "transformer." prefix).
// check_gpt2_tensors has already checked that it exists with the shape config.json implies.
torch::Tensor load_named(const SafetensorsFile& file, const std::string& hf_name) {
  return load_f32(file, file.info(find_tensor_name(file, hf_name)));
}

}  // namespace

Gpt2Model Gpt2Model::load(const ModelFiles& files, int64_t decodable_ids) {
  Gpt2Model m;
  m.config_ = read_gpt2_config(files.config);
  m.config_path_ = files.config;
  const SafetensorsFile file = SafetensorsFile::open(files.weights);
  // Every tensor's presence and shape against config.json, before any is copied.
  check_gpt2_tensors(file, m.config_);

  m.wte_ = load_named(file, "wte.weight");  // [V, C]
  const bool padded = decodable_ids > 0 && decodable_ids < m.config_.vocab_size;
  m.lm_head_ = padded ? m.wte_.narrow(0, 0, decodable_ids) : m.wte_;  // [V', C]
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

torch::Tensor Gpt2Model::forward(const std::vector<int64_t>& ids, const LinearLayout& layout) const {
  check_ids(ids, 0);
  return run(ids, {Segment{0, static_cast<int64_t>(ids.size()), 0, nullptr}}, layout);
}

KvCache Gpt2Model::make_cache(int64_t capacity) const {
  KvCache cache;
  ensure_room(cache, std::clamp<int64_t>(capacity, 1, config_.n_positions));
  return cache;
}

void Gpt2Model::ensure_room(KvCache& cache, int64_t tokens) const {
  if (tokens <= cache.capacity) return;
  // Grown geometrically, so a cache made without a hint copies O(log n) times, not every step.
  const int64_t capacity = std::min(std::max(tokens, 2 * cache.capacity), config_.n_positions);
  const auto grow = [&](std::vector<torch::Tensor>& layers) {
    layers.resize(static_cast<size_t>(config_.n_layer));
    for (torch::Tensor& t : layers) {
      torch::Tensor bigger = torch::empty({config_.n_head, capacity, config_.head_dim()}, torch::kFloat32);
      if (cache.length > 0) bigger.narrow(1, 0, cache.length).copy_(t.narrow(1, 0, cache.length));
      t = std::move(bigger);
    }
  };
  grow(cache.keys);
  grow(cache.values);
  cache.capacity = capacity;
}

namespace {

void check_cache_is_ours(const KvCache& cache, int64_t n_layer) {
  const bool fresh = cache.keys.empty() && cache.values.empty() && cache.length == 0;
  const bool ours = cache.keys.size() == static_cast<size_t>(n_layer) &&
                    cache.values.size() == static_cast<size_t>(n_layer) && cache.length <= cache.capacity;
  if (!fresh && !ours) {
    throw std::invalid_argument("Gpt2Model: the KvCache was not filled by this model");
  }
}

}  // namespace

torch::Tensor Gpt2Model::forward_cached(KvCache& cache, const std::vector<int64_t>& new_ids,
                                        const LinearLayout& layout) const {
  check_cache_is_ours(cache, config_.n_layer);
  check_ids(new_ids, cache.length);
  const int64_t n = static_cast<int64_t>(new_ids.size());
  ensure_room(cache, cache.length + n);
  torch::Tensor logits = run(new_ids, {Segment{0, n, cache.length, &cache}}, layout);
  cache.length += n;
  return logits;
}

torch::Tensor Gpt2Model::forward_step(const std::vector<KvCache*>& caches, const std::vector<int64_t>& ids,
                                      const LinearLayout& layout) const {
  if (caches.size() != ids.size() || ids.empty())
    throw std::invalid_argument("Gpt2Model::forward_step: one id per cache, at least one");
  std::vector<Segment> segments;
  for (size_t b = 0; b < ids.size(); ++b) {
    KvCache& cache = *caches[b];
    check_cache_is_ours(cache, config_.n_layer);
    check_ids({ids[b]}, cache.length);
    segments.push_back(Segment{static_cast<int64_t>(b), 1, cache.length, &cache});
  }
  for (KvCache* cache : caches) ensure_room(*cache, cache->length + 1);
  torch::Tensor logits = run(ids, segments, layout);
  for (KvCache* cache : caches) cache->length += 1;
  return logits;
}

// All rows in one GEMM, or GEMMs of exactly `tile` rows (LinearLayout).
torch::Tensor linear_rows(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor* bias,
                          const LinearLayout& layout) {
  const auto gemm = [&](const torch::Tensor& rows) {
    return bias != nullptr ? torch::addmm(*bias, rows, weight) : torch::linear(rows, weight);
  };
  const int64_t n = x.size(0);
  if (layout.tile <= 0) return gemm(x);
  const int64_t t = layout.tile;
  std::vector<torch::Tensor> parts;
  for (int64_t begin = 0; begin < n; begin += t) {
    const int64_t count = std::min(t, n - begin);
    if (count == t) {
      parts.push_back(gemm(x.narrow(0, begin, t)));
    } else {
      torch::Tensor padded = torch::zeros({t, x.size(1)}, x.options());
      padded.narrow(0, 0, count).copy_(x.narrow(0, begin, count));
      parts.push_back(gemm(padded).narrow(0, 0, count));
    }
  }
  return parts.size() == 1 ? parts.front().contiguous() : torch::cat(parts, 0);
}

std::vector<LinearOp> Gpt2Model::linear_ops() const {
  const Block& b = h_.front();
  return {LinearOp{"c_attn", b.attn_c_attn_weight, b.attn_c_attn_bias},
          LinearOp{"attn_c_proj", b.attn_c_proj_weight, b.attn_c_proj_bias},
          LinearOp{"c_fc", b.mlp_c_fc_weight, b.mlp_c_fc_bias},
          LinearOp{"mlp_c_proj", b.mlp_c_proj_weight, b.mlp_c_proj_bias},
          LinearOp{"lm_head", lm_head_, torch::Tensor()}};
}

KvCache Gpt2Model::copy_cache(const KvCache& cache, int64_t capacity) const {
  check_cache_is_ours(cache, config_.n_layer);
  KvCache out = make_cache(std::max(capacity, cache.length));
  for (size_t l = 0; l < cache.keys.size(); ++l) {
    out.keys[l].narrow(1, 0, cache.length).copy_(cache.keys[l].narrow(1, 0, cache.length));
    out.values[l].narrow(1, 0, cache.length).copy_(cache.values[l].narrow(1, 0, cache.length));
  }
  out.length = cache.length;
  return out;
}

torch::Tensor Gpt2Model::run(const std::vector<int64_t>& ids, const std::vector<Segment>& segments,
                             const LinearLayout& layout) const {
  torch::NoGradGuard no_grad;
  const int64_t C = config_.n_embd;

  // input_ids, position_ids = arange(past, past + N) for each sequence                [N], [N]
  const torch::Tensor input_ids = torch::tensor(ids, torch::kLong);
  std::vector<int64_t> positions;
  positions.reserve(ids.size());
  for (const Segment& s : segments)
    for (int64_t i = 0; i < s.count; ++i) positions.push_back(s.past + i);
  const torch::Tensor position_ids = torch::tensor(positions, torch::kLong);
  // hidden_states = wte(input_ids) + wpe(position_ids)                                [N, C]
  torch::Tensor x = torch::embedding(wte_, input_ids) + torch::embedding(wpe_, position_ids);

  for (int64_t i = 0; i < config_.n_layer; ++i) {
    const Block& b = h_[static_cast<size_t>(i)];
    // residual = x; x = ln_1(x); x = attn(x) + residual                               [N, C]
    const torch::Tensor a = torch::layer_norm(x, {C}, b.ln_1_weight, b.ln_1_bias, config_.layer_norm_epsilon);
    x = attention(b, a, i, segments, layout) + x;
    // residual = x; x = ln_2(x); x = residual + mlp(x)                                [N, C]
    const torch::Tensor m = torch::layer_norm(x, {C}, b.ln_2_weight, b.ln_2_bias, config_.layer_norm_epsilon);
    x = x + mlp(b, m, layout);
  }
  // ln_f                                                                              [N, C]
  x = torch::layer_norm(x, {C}, ln_f_weight_, ln_f_bias_, config_.layer_norm_epsilon);
  // lm_head = Linear(C, V, bias=False) tied to wte: logits = x @ wte^T                 [N, V]
  return linear_rows(x, lm_head_, nullptr, layout);
}

torch::Tensor Gpt2Model::attention(const Block& b, const torch::Tensor& x, int64_t layer,
                                   const std::vector<Segment>& segments, const LinearLayout& layout) const {
  // c_attn (Conv1D): addmm(bias, x, W), W [C, 3C]                                    [N, 3C]
  const torch::Tensor qkv = linear_rows(x, b.attn_c_attn_weight, &b.attn_c_attn_bias, layout);
  // Each sequence attends to its own keys: the rows of one sequence, [n, 3C] -> [n, C].
  torch::Tensor merged;
  if (segments.size() == 1) {
    merged = attend(qkv, layer, segments.front());
  } else {
    std::vector<torch::Tensor> rows;
    rows.reserve(segments.size());
    for (const Segment& s : segments) rows.push_back(attend(qkv.narrow(0, s.begin, s.count), layer, s));
    merged = torch::cat(rows, 0);
  }
  // c_proj (Conv1D), W [C, C]                                                         [N, C]
  return linear_rows(merged, b.attn_c_proj_weight, &b.attn_c_proj_bias, layout);
}

torch::Tensor Gpt2Model::attend(const torch::Tensor& qkv, int64_t layer, const Segment& segment) const {
  const int64_t N = qkv.size(0);
  const int64_t C = config_.n_embd;
  const int64_t H = config_.n_head;
  const int64_t D = config_.head_dim();

  // query, key, value = qkv.split(C, dim=-1)                                     3 x [N, C]
  const std::vector<torch::Tensor> parts = qkv.split(C, /*dim=*/1);
  // view(N, H, D).transpose: one row of D per head and token (views, as in HF)   [H, N, D]
  const torch::Tensor q = parts[0].view({N, H, D}).transpose(0, 1);
  torch::Tensor k = parts[1].view({N, H, D}).transpose(0, 1);
  torch::Tensor v = parts[2].view({N, H, D}).transpose(0, 1);

  if (KvCache* cache = segment.cache) {
    const size_t l = static_cast<size_t>(layer);
    // key = cat(past_key, key, dim=-2), likewise value (HF's DynamicCache.update), written in
    // place after the cached tokens; attention reads the first T positions          [H, T, D]
    const int64_t T = segment.past + N;
    cache->keys[l].narrow(1, segment.past, N).copy_(k);
    cache->values[l].narrow(1, segment.past, N).copy_(v);
    // With nothing cached before, HF attends to the new keys themselves (no cat): so do we,
    // keeping the exact operands (views of qkv) of the one-run path.
    if (segment.past > 0) {
      k = cache->keys[l].narrow(1, 0, T);
      v = cache->values[l].narrow(1, 0, T);
    }
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
  return heads.transpose(0, 1).reshape({N, C}).contiguous();
}

torch::Tensor Gpt2Model::mlp(const Block& b, const torch::Tensor& x, const LinearLayout& layout) const {
  // c_fc (Conv1D), W [C, F]                                                           [N, F]
  const torch::Tensor hidden = linear_rows(x, b.mlp_c_fc_weight, &b.mlp_c_fc_bias, layout);
  // act                                                                               [N, F]
  const torch::Tensor activated = activation(hidden);
  // c_proj (Conv1D), W [F, C]                                                         [N, C]
  return linear_rows(activated, b.mlp_c_proj_weight, &b.mlp_c_proj_bias, layout);
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

std::vector<float> logits_row(const torch::Tensor& logits, int64_t row) {
  const torch::Tensor r = logits.select(0, row).to(torch::kFloat32).contiguous();
  return std::vector<float>(r.data_ptr<float>(), r.data_ptr<float>() + r.numel());
}

}  // namespace genrepro
