// GPT-2's forward in genrepro's own float32 kernels, following Hugging Face's GPT2LMHeadModel step
// by step (engine/gpt2_model.cpp is the libtorch transcription; the math is the same, the
// operation order is strict_gpt2.hpp's). Shapes in comments: R = rows fed now (every sequence's new
// tokens, in order), T = tokens a row attends to, C = n_embd, H = n_head, D = head_dim,
// F = MLP width, V = vocab_size, V' = logits_size().
#include "strict/strict_gpt2.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/gpt2_tensors.hpp"
#include "model/safetensors.hpp"
#include "strict/kernel_set.hpp"
#include "strict/packed_linear.hpp"
#include "strict/thread_team.hpp"
#include "util/errors.hpp"

namespace genrepro::strict {

struct StrictGpt2::Weights {
  // One transformer block, named as in the checkpoint (h.{i}.*).
  struct Block {
    std::vector<float> ln_1_weight, ln_1_bias;  // [C]
    PackedLinear attn_c_attn;                   // [C] -> [3C]
    PackedLinear attn_c_proj;                   // [C] -> [C]
    std::vector<float> ln_2_weight, ln_2_bias;  // [C]
    PackedLinear mlp_c_fc;                      // [C] -> [F]
    PackedLinear mlp_c_proj;                    // [F] -> [C]
  };

  Gpt2Config config;
  std::string config_path;  // named in errors about ids and context
  int64_t logits_size = 0;  // V'
  const KernelSet* kernels = nullptr;
  float eps = 0.0f;         // layer_norm_epsilon as float
  float attn_divisor = 1.0f;
  PackedLinear wte;         // [C] -> [V]: the tied head; the embedding reads its rows back
  std::vector<float> wpe;   // [n_positions, C]
  std::vector<Block> h;
  std::vector<float> ln_f_weight, ln_f_bias;  // [C]
};

namespace {

// The tensor `hf_name` (with or without the "transformer." prefix) as float32: F32 read in place
// from the file's mapping when aligned, F16 / BF16 upcast exactly.
class TensorReader {
 public:
  explicit TensorReader(const SafetensorsFile& file) : file_(file) {}

  std::vector<float> copy(const std::string& hf_name) const { return file_.to_f32(info(hf_name)); }

  // Calls use(values) with a pointer valid during the call.
  void with(const std::string& hf_name, const std::function<void(const float*)>& use) const {
    const TensorInfo& t = info(hf_name);
    const std::byte* bytes = file_.data(t);
    if (t.dtype == TensorDType::F32 && reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0) {
      use(reinterpret_cast<const float*>(bytes));
    } else {
      use(file_.to_f32(t).data());
    }
  }

 private:
  const TensorInfo& info(const std::string& hf_name) const { return file_.info(find_tensor_name(file_, hf_name)); }
  const SafetensorsFile& file_;
};

PackedLinear load_conv1d(const TensorReader& tensors, const std::string& name, int64_t in, int64_t out) {
  const std::vector<float> bias = tensors.copy(name + ".bias");
  PackedLinear packed;
  tensors.with(name + ".weight", [&](const float* w) { packed = PackedLinear::from_in_out(w, bias.data(), in, out); });
  return packed;
}

// The kernel set GENREPRO_STRICT_ISA names, else the fastest this CPU runs: read once, at load.
const KernelSet& kernels_from_environment() {
  const char* requested = std::getenv("GENREPRO_STRICT_ISA");
  return choose_kernel_set(requested != nullptr ? requested : "");
}

// Calls body(r) for every row r < rows, split over the team in contiguous ranges.
void for_rows(ThreadTeam& team, int64_t rows, const std::function<void(int64_t)>& body) {
  const int64_t jobs = std::min<int64_t>(rows, 4 * team.size());
  team.run(static_cast<size_t>(jobs), [&](size_t j) {
    const int64_t begin = rows * static_cast<int64_t>(j) / jobs;
    const int64_t end = rows * (static_cast<int64_t>(j) + 1) / jobs;
    for (int64_t r = begin; r < end; ++r) body(r);
  });
}

// The new tokens of one sequence: rows [first_row, first_row + count) at positions past.. .
struct Segment {
  StrictCache* cache = nullptr;
  const std::vector<int64_t>* ids = nullptr;
  int64_t first_row = 0;
  int64_t count = 0;
  int64_t past = 0;
};

}  // namespace

StrictGpt2::StrictGpt2() = default;
StrictGpt2::StrictGpt2(StrictGpt2&&) noexcept = default;
StrictGpt2& StrictGpt2::operator=(StrictGpt2&&) noexcept = default;
StrictGpt2::~StrictGpt2() = default;

StrictGpt2 StrictGpt2::load(const ModelFiles& files, int64_t decodable_ids) {
  ThreadTeam team(1);
  return load(files, decodable_ids, team);
}

StrictGpt2 StrictGpt2::load(const ModelFiles& files, int64_t decodable_ids, ThreadTeam& team) {
  StrictGpt2 m;
  m.w_ = std::make_unique<Weights>();
  Weights& w = *m.w_;
  w.kernels = &kernels_from_environment();
  w.config = read_gpt2_config(files.config);
  w.config_path = files.config;
  const Gpt2Config& c = w.config;
  if (c.activation_function != "gelu_new") {
    throw ModelFileError(files.config + ": activation_function \"" + c.activation_function +
                         "\" has no strict kernel; strict numerics implement gelu_new only "
                         "(run this model with --numerics reference or tiled)");
  }
  const SafetensorsFile file = SafetensorsFile::open(files.weights);
  // Every tensor's presence and shape against config.json, before any is read.
  check_gpt2_tensors(file, c);
  const TensorReader tensors(file);

  const int64_t C = c.n_embd;
  const int64_t F = c.mlp_width();
  w.logits_size = decodable_ids > 0 && decodable_ids < c.vocab_size ? decodable_ids : c.vocab_size;
  w.eps = static_cast<float>(c.layer_norm_epsilon);
  // HF divides by torch.full([], head_dim ** 0.5): Python's double square root, rounded to float.
  w.attn_divisor = static_cast<float>(std::sqrt(static_cast<double>(c.head_dim())));
  w.wpe = tensors.copy("wpe.weight");  // [n_positions, C]
  w.h.resize(static_cast<size_t>(c.n_layer));
  // Packing reads and writes every weight once: the head (the largest) and each block are jobs
  // of their own, on the team's threads. Packing is copying, so the threads decide no bit.
  team.run(static_cast<size_t>(c.n_layer) + 1, [&](size_t job) {
    if (job == 0) {
      tensors.with("wte.weight", [&](const float* wte) { w.wte = PackedLinear::from_out_in(wte, c.vocab_size, C); });  // [V, C]
      return;
    }
    const std::string p = "h." + std::to_string(job - 1) + ".";
    Weights::Block& b = w.h[job - 1];
    b.ln_1_weight = tensors.copy(p + "ln_1.weight");
    b.ln_1_bias = tensors.copy(p + "ln_1.bias");
    b.attn_c_attn = load_conv1d(tensors, p + "attn.c_attn", C, 3 * C);
    b.attn_c_proj = load_conv1d(tensors, p + "attn.c_proj", C, C);
    b.ln_2_weight = tensors.copy(p + "ln_2.weight");
    b.ln_2_bias = tensors.copy(p + "ln_2.bias");
    b.mlp_c_fc = load_conv1d(tensors, p + "mlp.c_fc", C, F);
    b.mlp_c_proj = load_conv1d(tensors, p + "mlp.c_proj", F, C);
    // h.{i}.attn.bias / masked_bias are HF's causal-mask buffers: attention reads only t <= pos.
  });
  w.ln_f_weight = tensors.copy("ln_f.weight");
  w.ln_f_bias = tensors.copy("ln_f.bias");
  return m;
}

const Gpt2Config& StrictGpt2::config() const { return w_->config; }
int64_t StrictGpt2::logits_size() const { return w_->logits_size; }
const char* StrictGpt2::kernel_isa() const { return to_string(w_->kernels->isa); }

namespace {

size_t cache_floats(const Gpt2Config& c, int64_t capacity) {
  return static_cast<size_t>(c.n_head * capacity * c.head_dim());
}

// Moves the first `length` tokens of every head into caches of room `capacity`.
void resize_cache(StrictCache& cache, const Gpt2Config& c, int64_t capacity) {
  const int64_t D = c.head_dim();
  for (auto* layers : {&cache.keys, &cache.values}) {
    layers->resize(static_cast<size_t>(c.n_layer));
    for (std::vector<float>& layer : *layers) {
      std::vector<float> bigger(cache_floats(c, capacity));
      for (int64_t h = 0; h < c.n_head && cache.length > 0; ++h)
        std::copy_n(layer.data() + h * cache.capacity * D, cache.length * D, bigger.data() + h * capacity * D);
      layer = std::move(bigger);
    }
  }
  cache.capacity = capacity;
}

void check_cache_is_ours(const StrictCache& cache, const Gpt2Config& c) {
  const bool fresh = cache.keys.empty() && cache.values.empty() && cache.length == 0;
  bool ours = cache.keys.size() == static_cast<size_t>(c.n_layer) && cache.values.size() == cache.keys.size() &&
              cache.length >= 0 && cache.length <= cache.capacity;
  for (size_t l = 0; ours && l < cache.keys.size(); ++l)
    ours = cache.keys[l].size() == cache_floats(c, cache.capacity) && cache.values[l].size() == cache.keys[l].size();
  if (!fresh && !ours) throw std::invalid_argument("StrictGpt2: the StrictCache was not made by this model");
}

// Gpt2Model::check_ids's messages (engine/gpt2_model.cpp), word for word: a user sees the same
// line whichever numerics run.
void check_ids(const std::vector<int64_t>& ids, int64_t past_length, const Gpt2Config& c, const std::string& config_path) {
  if (ids.empty()) {
    throw UsageError("GPT-2 forward: no token ids to feed; the model needs at least one token "
                     "(give a non-empty prompt)");
  }
  const int64_t total = past_length + static_cast<int64_t>(ids.size());
  if (total > c.n_positions) {
    throw UsageError("GPT-2 forward: a sequence of " + std::to_string(total) + " tokens exceeds the context of " +
                     config_path + " (n_positions " + std::to_string(c.n_positions) + "); feed at most " +
                     std::to_string(c.n_positions) + " tokens (shorten the prompt or lower --max-new-tokens)");
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= c.vocab_size) {
      throw UsageError("GPT-2 forward: token id " + std::to_string(ids[i]) + " at position " +
                       std::to_string(past_length + static_cast<int64_t>(i)) + " is outside the vocabulary of " +
                       config_path + " (vocab_size " + std::to_string(c.vocab_size) + "); ids must be in [0, " +
                       std::to_string(c.vocab_size - 1) + "]");
    }
  }
}

// Room for `tokens`, grown geometrically so that a cache made without a hint copies O(log n) times.
void ensure_room(StrictCache& cache, const Gpt2Config& c, int64_t tokens) {
  if (tokens <= cache.capacity && !cache.keys.empty()) return;
  resize_cache(cache, c, std::min(std::max(tokens, 2 * cache.capacity), c.n_positions));
}

// The activations of one forward call, [R, *] each.
struct Activations {
  Activations(int64_t R, const Gpt2Config& c)
      : x(static_cast<size_t>(R * c.n_embd)),
        normed(x.size()),
        qkv(static_cast<size_t>(R * 3 * c.n_embd)),
        heads(x.size()),
        proj(x.size()),
        hidden(static_cast<size_t>(R * c.mlp_width())) {}
  std::vector<float> x, normed, qkv, heads, proj, hidden;
};

}  // namespace

StrictCache StrictGpt2::make_cache(int64_t capacity) const {
  StrictCache cache;
  resize_cache(cache, w_->config, std::clamp<int64_t>(capacity, 1, w_->config.n_positions));
  return cache;
}

void StrictGpt2::forward(const std::vector<StrictCache*>& caches, const std::vector<std::vector<int64_t>>& new_ids,
                         float* logits, ThreadTeam& team) const {
  const Weights& w = *w_;
  const Gpt2Config& c = w.config;
  const KernelSet& k = *w.kernels;
  if (caches.empty() || caches.size() != new_ids.size())
    throw std::invalid_argument("StrictGpt2::forward: one id list per cache, at least one");
  if (std::set<const StrictCache*>(caches.begin(), caches.end()).size() != caches.size())
    throw std::invalid_argument("StrictGpt2::forward: a cache appears twice");
  // Every check before any cache changes.
  for (size_t b = 0; b < caches.size(); ++b) {
    check_cache_is_ours(*caches[b], c);
    check_ids(new_ids[b], caches[b]->length, c, w.config_path);
  }
  std::vector<Segment> segments;
  int64_t R = 0;
  for (size_t b = 0; b < caches.size(); ++b) {
    const int64_t n = static_cast<int64_t>(new_ids[b].size());
    ensure_room(*caches[b], c, caches[b]->length + n);
    segments.push_back(Segment{caches[b], &new_ids[b], R, n, caches[b]->length});
    R += n;
  }

  const int64_t C = c.n_embd, H = c.n_head, D = c.head_dim(), F = c.mlp_width();
  Activations a(R, c);
  // hidden_states = wte(input_ids) + wpe(position_ids)                                 [R, C]
  for (const Segment& s : segments)
    for (int64_t i = 0; i < s.count; ++i) {
      const int64_t id = (*s.ids)[static_cast<size_t>(i)];
      const float* pos = w.wpe.data() + (s.past + i) * C;
      float* x = a.x.data() + (s.first_row + i) * C;
      for (int64_t j = 0; j < C; ++j) x[j] = w.wte.weight(j, id) + pos[j];
    }
  const auto add_rows = [&](const std::vector<float>& y) {  // x = x + y, the residual
    for (size_t j = 0; j < a.x.size(); ++j) a.x[j] = a.x[j] + y[j];
  };

  for (int64_t l = 0; l < c.n_layer; ++l) {
    const Weights::Block& b = w.h[static_cast<size_t>(l)];
    // ln_1                                                                              [R, C]
    for_rows(team, R, [&](int64_t r) {
      k.layer_norm(a.x.data() + r * C, C, b.ln_1_weight.data(), b.ln_1_bias.data(), w.eps, a.normed.data() + r * C);
    });
    // c_attn (Conv1D)                                                                  [R, 3C]
    b.attn_c_attn.apply(k, a.normed.data(), R, 3 * C, a.qkv.data(), team);
    // key, value of every new row into its cache: [H][capacity][D] per layer, after the past
    for (const Segment& s : segments)
      for (int64_t i = 0; i < s.count; ++i) {
        const float* qkv = a.qkv.data() + (s.first_row + i) * 3 * C;
        const int64_t cap = s.cache->capacity;
        for (int64_t h = 0; h < H; ++h) {
          const int64_t at = (h * cap + s.past + i) * D;
          std::copy_n(qkv + C + h * D, D, s.cache->keys[static_cast<size_t>(l)].data() + at);
          std::copy_n(qkv + 2 * C + h * D, D, s.cache->values[static_cast<size_t>(l)].data() + at);
        }
      }
    // causal attention, one job per row and head: softmax(q k^T / sqrt(D)) v over t <= pos  [R, C]
    team.run(static_cast<size_t>(R * H), [&](size_t job) {
      const int64_t r = static_cast<int64_t>(job) / H;
      const int64_t h = static_cast<int64_t>(job) % H;
      const Segment& s = *std::prev(std::upper_bound(segments.begin(), segments.end(), r,
                                                     [](int64_t row, const Segment& seg) { return row < seg.first_row; }));
      const int64_t cap = s.cache->capacity;
      const int64_t T = s.past + (r - s.first_row) + 1;
      std::vector<float> scores(static_cast<size_t>(T));
      AttendArgs args;
      args.q = a.qkv.data() + r * 3 * C + h * D;
      args.keys = s.cache->keys[static_cast<size_t>(l)].data() + h * cap * D;
      args.values = s.cache->values[static_cast<size_t>(l)].data() + h * cap * D;
      args.T = T;
      args.D = D;
      args.scale = c.scale_attn_weights;
      args.divisor = w.attn_divisor;
      args.scores = scores.data();
      args.out = a.heads.data() + r * C + h * D;
      k.attend(args);
    });
    // c_proj (Conv1D), then the residual                                                 [R, C]
    b.attn_c_proj.apply(k, a.heads.data(), R, C, a.proj.data(), team);
    add_rows(a.proj);
    // ln_2, c_fc, gelu_new, mlp c_proj, the residual                                     [R, C]
    for_rows(team, R, [&](int64_t r) {
      k.layer_norm(a.x.data() + r * C, C, b.ln_2_weight.data(), b.ln_2_bias.data(), w.eps, a.normed.data() + r * C);
    });
    b.mlp_c_fc.apply(k, a.normed.data(), R, F, a.hidden.data(), team);  // [R, F]
    for_rows(team, R, [&](int64_t r) { k.gelu_new(a.hidden.data() + r * F, F); });
    b.mlp_c_proj.apply(k, a.hidden.data(), R, C, a.proj.data(), team);
    add_rows(a.proj);
  }
  // ln_f on each sequence's last row only (a row's norm is its own), then the head      [B, V']
  const int64_t B = static_cast<int64_t>(segments.size());
  std::vector<float> last(static_cast<size_t>(B * C));
  for (int64_t s = 0; s < B; ++s) {
    const Segment& seg = segments[static_cast<size_t>(s)];
    k.layer_norm(a.x.data() + (seg.first_row + seg.count - 1) * C, C, w.ln_f_weight.data(), w.ln_f_bias.data(), w.eps,
                 last.data() + s * C);
  }
  w.wte.apply(k, last.data(), B, w.logits_size, logits, team);
  for (const Segment& s : segments) s.cache->length += s.count;
}

}  // namespace genrepro::strict
