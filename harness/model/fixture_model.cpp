#include "model/fixture_model.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "util/errors.hpp"
#include "model/gpt2_tensors.hpp"
#include "model/near_tie.hpp"
#include "model/safetensors.hpp"
#include "util/splitmix64.hpp"

namespace genrepro {

namespace fs = std::filesystem;

namespace {

// ---- the portable generator (documented in docs/fixture-models.md) ----

// FNV-1a, 64-bit: turns a tensor name into the generator's starting state, so each tensor's
// values depend only on its own name and not on the order tensors are generated in.
uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}


// One draw of 64 bits gives four 16-bit uniforms; their centred sum (Irwin-Hall, n = 4) is a
// bell-shaped integer in [-131070, 131070] with standard deviation ~ 65536 / sqrt(3).
constexpr int64_t kIrwinHallCentre = 2 * 65535;
constexpr double kIrwinHallUnit = 1.0 / 65536.0;  // a power of two: scaling by it is exact

int64_t irwin_hall4(SplitMix64& rng) {
  const uint64_t x = rng.next();
  return static_cast<int64_t>((x & 0xffff) + ((x >> 16) & 0xffff) + ((x >> 32) & 0xffff) + (x >> 48)) -
         kIrwinHallCentre;
}

// How a tensor's values are drawn: value = offset + amplitude * c / 65536, with c the centred
// Irwin-Hall integer, so values lie in [offset - 2a, offset + 2a] with standard deviation a / sqrt(3).
// Amplitudes are short dyadic fractions and |c| < 2^18, so amplitude * c / 65536 and the sum with
// offset are exact in double; the only rounding is the final conversion to float32, which IEEE 754
// defines exactly. No libm function is involved, so the bytes are the same on every machine.
struct Draw {
  double offset = 0;
  double amplitude = 0;
};

// Amplitudes per tensor role. The tiny preset's values were chosen with a numpy transcription of
// GPT-2 (docs/fixture-models.md) so that next-token distributions are peaked: top-1 probabilities
// mostly 0.1-0.9 at T = 1, nuclei of a few tokens at T = 0.5 and thousands at T = 2, and greedy
// runs that fall into repeats. The gpt2-124m-shape preset divides the width-dependent amplitudes
// by sqrt(768 / 64) ~ 3.5 (rounded to dyadic values) so its logits have a similar spread.
struct InitAmplitudes {
  double wte, wpe, weight, proj, bias, ln_weight;
};

InitAmplitudes amplitudes(FixturePreset preset) {
  switch (preset) {
    case FixturePreset::tiny:
    case FixturePreset::near_tie: return {0.875, 0.1875, 0.375, 0.375, 0.03125, 0.1875};
    case FixturePreset::gpt2_124m_shape: return {0.25, 0.0625, 0.109375, 0.109375, 0.03125, 0.1875};
  }
  return {};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Draw draw_for(const std::string& name, const InitAmplitudes& a) {
  const bool layer_norm = name.find("ln_") != std::string::npos;
  if (layer_norm) return ends_with(name, ".weight") ? Draw{1.0, a.ln_weight} : Draw{0.0, a.bias};
  if (name == "wte.weight") return {0.0, a.wte};
  if (name == "wpe.weight") return {0.0, a.wpe};
  if (ends_with(name, ".bias")) return {0.0, a.bias};
  if (ends_with(name, "c_proj.weight")) return {0.0, a.proj};
  return {0.0, a.weight};
}

void fill_random(const std::string& name, const Draw& d, size_t n, std::vector<float>& out) {
  SplitMix64 rng(fnv1a64(name));
  const double step = d.amplitude * kIrwinHallUnit;  // exact: amplitude is dyadic
  out.resize(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(d.offset + static_cast<double>(irwin_hall4(rng)) * step);
}

// h.N.attn.bias as in the official checkpoint: [1, 1, P, P], ones on and below the diagonal.
void fill_causal_mask(int64_t P, std::vector<float>& out) {
  out.assign(static_cast<size_t>(P * P), 0.0f);
  for (int64_t r = 0; r < P; ++r)
    for (int64_t c = 0; c <= r; ++c) out[static_cast<size_t>(r * P + c)] = 1.0f;
}

// Checkpoint order: wte, wpe, then per block the parameters and the h.N.attn.bias buffer, ln_f.
std::vector<SafetensorsEntry> fixture_entries(const Gpt2Config& c) {
  std::vector<SafetensorsEntry> entries;
  for (const ExpectedTensor& t : expected_gpt2_tensors(c)) {
    entries.push_back({t.name, t.shape});
    if (ends_with(t.name, ".ln_1.bias")) {  // place the mask buffer with its block's attention
      const std::string block = t.name.substr(0, t.name.size() - std::strlen("ln_1.bias"));
      entries.push_back({block + "attn.bias", {1, 1, c.n_positions, c.n_positions}});
    }
  }
  return entries;
}

nlohmann::json fixture_config_json(FixturePreset preset, const Gpt2Config& c) {
  // The fields of Hugging Face's gpt2 config.json, with this preset's sizes.
  nlohmann::json j;
  j["activation_function"] = c.activation_function;
  j["architectures"] = {"GPT2LMHeadModel"};
  j["attn_pdrop"] = 0.1;
  j["bos_token_id"] = c.bos_token_id;
  j["embd_pdrop"] = 0.1;
  j["eos_token_id"] = c.eos_token_id;
  j["initializer_range"] = 0.02;
  j["layer_norm_epsilon"] = c.layer_norm_epsilon;
  j["model_type"] = "gpt2";
  j["n_ctx"] = c.n_positions;
  j["n_embd"] = c.n_embd;
  j["n_head"] = c.n_head;
  j["n_inner"] = nullptr;
  j["n_layer"] = c.n_layer;
  j["n_positions"] = c.n_positions;
  j["reorder_and_upcast_attn"] = false;
  j["resid_pdrop"] = 0.1;
  j["scale_attn_by_inverse_layer_idx"] = false;
  j["scale_attn_weights"] = true;
  j["vocab_size"] = c.vocab_size;
  j["genrepro_fixture"] = {{"preset", to_string(preset)},
                           {"weights", "splitmix64 seeded by FNV-1a-64(tensor name), Irwin-Hall(4) x 16-bit; "
                                       "see docs/fixture-models.md"}};
  if (preset == FixturePreset::near_tie) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const PlantedPair& p : default_near_tie_pairs()) pairs.push_back({p.left, p.right});
    j["genrepro_near_tie"] = {{"pairs", pairs}, {"eps", kNearTieEps}, {"made_by", "genrepro fixture --preset near-tie"}};
  }
  return j;
}

void write_text_atomically(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw ModelFileError(path.string() + ": cannot write (" + std::strerror(errno) + ")");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw ModelFileError(path.string() + ": cannot rename the temporary file into place (" + ec.message() + ")");
  }
}

// GPT-2's tokenizer files under either naming: OpenAI's (encoder.json, vocab.bpe) or Hugging
// Face's (vocab.json, merges.txt).
fs::path find_tokenizer_file(const fs::path& dir, const char* hf_name, const char* openai_name) {
  for (const char* n : {hf_name, openai_name}) {
    std::error_code ec;
    if (fs::is_regular_file(dir / n, ec)) return dir / n;
  }
  throw ModelFileError("tokenizer directory " + dir.string() + ": missing " + hf_name + " (or " + openai_name +
                       "); run scripts/setup.sh (it installs GPT-2's tokenizer files) or pass --tokenizer-dir DIR");
}

std::string read_file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw ModelFileError(path.string() + ": cannot read");
  return bytes;
}

}  // namespace

const char* to_string(FixturePreset p) {
  switch (p) {
    case FixturePreset::tiny: return "tiny";
    case FixturePreset::gpt2_124m_shape: return "gpt2-124m-shape";
    case FixturePreset::near_tie: return "near-tie";
  }
  return "?";
}

FixturePreset parse_fixture_preset(const std::string& name) {
  if (name == "tiny") return FixturePreset::tiny;
  if (name == "gpt2-124m-shape") return FixturePreset::gpt2_124m_shape;
  if (name == "near-tie") return FixturePreset::near_tie;
  throw UsageError("--preset " + name + " is not a fixture preset; allowed: tiny, gpt2-124m-shape, near-tie");
}

Gpt2Config fixture_config(FixturePreset preset) {
  Gpt2Config c;  // defaults are GPT-2 small's hyper-parameters
  if (preset == FixturePreset::tiny || preset == FixturePreset::near_tie) {
    // The real vocabulary (so the real tokenizer works), a short context and a narrow, shallow
    // body: a forward pass over 128 tokens takes milliseconds. n_head 4 keeps head_dim (16) > 1
    // so head splitting bugs show.
    c.n_positions = 128;
    c.n_embd = 64;
    c.n_layer = 2;
    c.n_head = 4;
  }
  c.raw = fixture_config_json(preset, c);
  return c;
}

std::vector<SafetensorsEntry> fixture_tensor_entries(FixturePreset preset) {
  return fixture_entries(fixture_config(preset));
}

std::vector<float> fixture_tensor_values(FixturePreset preset, const SafetensorsEntry& entry) {
  std::vector<float> out;
  if (ends_with(entry.name, ".attn.bias")) {
    fill_causal_mask(entry.shape.back(), out);
  } else {
    int64_t n = 1;
    for (int64_t d : entry.shape) n *= d;
    fill_random(entry.name, draw_for(entry.name, amplitudes(preset)), static_cast<size_t>(n), out);
    if (preset == FixturePreset::near_tie && entry.name == "wte.weight")
      plant_near_ties(out, entry.shape[0], entry.shape[1], default_near_tie_pairs(), kNearTieEps);
  }
  return out;
}

void write_fixture_model(const std::string& out_dir, FixturePreset preset, const std::string& tokenizer_dir,
                         const std::function<void(const std::string&)>& progress) {
  const fs::path dir(out_dir);
  // Find the tokenizer files before writing anything, so a bad --tokenizer-dir leaves no debris.
  const fs::path vocab = find_tokenizer_file(tokenizer_dir, "vocab.json", "encoder.json");
  const fs::path merges = find_tokenizer_file(tokenizer_dir, "merges.txt", "vocab.bpe");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ModelFileError(out_dir + ": cannot create the fixture directory (" + ec.message() + ")");

  const Gpt2Config config = fixture_config(preset);
  const std::vector<SafetensorsEntry> entries = fixture_entries(config);
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"genrepro_fixture", to_string(preset)}};
  write_safetensors_f32_streamed(
      (dir / "model.safetensors").string(), entries,
      [&](size_t i, std::vector<float>& out) {
        if (progress)
          progress("tensor " + std::to_string(i + 1) + "/" + std::to_string(entries.size()) + " " + entries[i].name +
                   " " + shape_text(entries[i].shape));
        out = fixture_tensor_values(preset, entries[i]);
      },
      metadata);
  write_text_atomically(dir / "vocab.json", read_file_bytes(vocab));
  write_text_atomically(dir / "merges.txt", read_file_bytes(merges));
  // config.json last: a directory with a config.json was written completely.
  write_text_atomically(dir / "config.json", config.raw.dump(2) + "\n");
}

void write_fixture_model(const std::string& out_dir, FixturePreset preset, const std::string& tokenizer_dir) {
  write_fixture_model(out_dir, preset, tokenizer_dir, nullptr);
}

}  // namespace genrepro
