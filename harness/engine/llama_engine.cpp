#include "engine/llama_engine.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include "model/gguf_export.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "tokenizer/token_lines.hpp"
#include "util/sha256.hpp"

namespace genrepro {

namespace {

namespace fs = std::filesystem;
namespace abi = llama::abi;

// llama.cpp's own sampler chain for a run, as common_sampler_init builds it from the run's
// llama.cpp controls (logit_bias first when there are biases, the run's order, then dist seeded
// with the run's seed), the prompt accepted first as llama-completion does. A run of another
// framework is greedy (check_run_params allows nothing else): llama.cpp's greedy sampler.
std::unique_ptr<llama::LlamaSampler> sampler_for(const std::shared_ptr<llama::LlamaLibrary>& lib, const RunParams& params,
                                                 int64_t vocab_size, const std::vector<int64_t>& prompt_ids) {
  auto chain = std::make_unique<llama::LlamaSampler>(lib);
  const abi::Functions& f = chain->api();
  const SamplingParams& s = params.sampling;
  if (s.framework != Framework::llama_cpp) {
    chain->add(f.init_greedy());
    return chain;
  }
  const FrameworkControls& c = s.controls;
  const auto n_vocab = static_cast<int32_t>(vocab_size);
  const auto min_keep = static_cast<size_t>(c.min_keep);
  if (!c.logit_bias.empty()) {
    std::vector<abi::LogitBias> biases;
    for (const TokenBias& b : c.logit_bias) biases.push_back({static_cast<abi::Token>(b.token), static_cast<float>(b.bias)});
    chain->add(f.init_logit_bias(n_vocab, static_cast<int32_t>(biases.size()), biases.data()));
  }
  // A greedy run of llama.cpp's framework is its chain at temperature 0: the top token alone survives.
  const float temperature = s.mode == DecodeMode::greedy ? 0.0f : static_cast<float>(s.temperature);
  for (SamplerStage stage : s.sampler_order) {
    switch (stage) {
      case SamplerStage::penalties:
        chain->add(f.init_penalties(n_vocab, static_cast<int32_t>(c.repeat_last_n), static_cast<float>(c.repeat_penalty),
                                    static_cast<float>(c.frequency_penalty), static_cast<float>(c.presence_penalty)));
        break;
      case SamplerStage::top_n_sigma: chain->add(f.init_top_n_sigma(static_cast<float>(c.top_n_sigma))); break;
      case SamplerStage::top_k: chain->add(f.init_top_k(static_cast<int32_t>(s.top_k))); break;
      case SamplerStage::typical_p: chain->add(f.init_typical(static_cast<float>(c.typical_p), min_keep)); break;
      case SamplerStage::top_p: chain->add(f.init_top_p(static_cast<float>(s.top_p), min_keep)); break;
      case SamplerStage::min_p: chain->add(f.init_min_p(static_cast<float>(c.min_p), min_keep)); break;
      case SamplerStage::temperature:
        chain->add(f.init_temp_ext(temperature, static_cast<float>(c.dynatemp_range), static_cast<float>(c.dynatemp_exponent)));
        break;
      default: break;  // logit_bias is added first, dist last; the other frameworks' stages are not llama.cpp's
    }
  }
  chain->add(f.init_dist(static_cast<uint32_t>(s.seed)));
  for (int64_t t : prompt_ids) chain->accept(t);
  return chain;
}

// llama.cpp's logits for the loop. Its sampling and records are computed in strict numerics'
// step math, so what the chain does with llama.cpp's logits does not depend on this CPU either.
// Beside it, llama.cpp's own sampler chain picks from the same logits; the token the loop picked
// must be that one, step for step, or the run stops with the first step they part at.
class LlamaLogitsSource : public LogitsSource {
 public:
  LlamaLogitsSource(llama::LlamaSession& session, int64_t context, bool keep_cache, llama::LlamaSampler& sampler,
                    std::string run_id)
      : session_(session), context_(context), keep_cache_(keep_cache), sampler_(sampler), run_id_(std::move(run_id)) {}

  std::vector<float> next_logits(const std::vector<int64_t>& ids) override {
    if (theirs_) {
      check_pick(ids.back());
      sampler_.accept(ids.back());
    }
    std::vector<float> logits = session_.logits_after(ids, keep_cache_);
    theirs_ = sampler_.pick(logits);
    ++step_;
    return logits;
  }
  int64_t context_size() const override { return context_; }
  const StepMath& step_math() const override { return strict_step_math(); }

  // The pick of the last step, which no later call sees.
  void check_last(const std::vector<int64_t>& output_ids) const {
    if (theirs_ && output_ids.size() == static_cast<size_t>(step_)) check_pick(output_ids.back());
  }

 private:
  void check_pick(int64_t ours) const {
    if (ours == *theirs_) return;
    throw Error("run " + run_id_ + ": at new token " + std::to_string(step_) + " llama.cpp's own sampler chain " +
                "(llama_sampler_*) picks " + std::to_string(*theirs_) + " where genrepro's chain picked " +
                std::to_string(ours) + " on the same logits; please report it with the experiment file");
  }

  llama::LlamaSession& session_;
  int64_t context_;
  bool keep_cache_;
  llama::LlamaSampler& sampler_;
  std::string run_id_;
  std::optional<int64_t> theirs_;
  int64_t step_ = 0;
};

// The GGUF of `files`, exported once and kept under the digest of its sources and the exporter's
// revision: the same model never exports twice, and a changed file exports anew. Its sha256 is
// kept beside it, so a file changed in the cache is exported again rather than trusted.
std::string cached_gguf(const ModelFiles& files, const ModelInfo& model, std::string& sha256) {
  std::string key = "revision " + std::to_string(kGgufExportRevision);
  for (const auto& [name, file] : model.files) key += "\n" + name + " " + file.sha256;
  const fs::path dir = fs::path(default_cache_dir()) / "gguf";
  const std::string gguf = (dir / (sha256_hex(key).substr(0, 32) + ".gguf")).string();
  const std::string digest_file = gguf + ".sha256";
  std::error_code ec;
  if (fs::exists(gguf, ec) && fs::exists(digest_file, ec)) {
    std::ifstream in(digest_file);
    std::string recorded;
    in >> recorded;
    sha256 = sha256_file(gguf).sha256;
    if (sha256 == recorded) return gguf;
  }
  sha256 = export_gguf(files, gguf).sha256;
  write_file_atomically(digest_file, sha256 + "\n");
  return gguf;
}

std::string library_path(const LlamaRequest& request) {
  if (!request.library.empty()) return request.library;
  throw UsageError("the llama.cpp engine needs llama.cpp's library: pass --llama-lib DIR (the directory holding "
                   "libllama.so) or set GENREPRO_LLAMA_LIB; scripts/setup.sh --tests installs one from npm "
                   "(docs/engines.md)");
}

}  // namespace

std::unique_ptr<LlamaEngine> LlamaEngine::load(const LlamaRequest& request, const ModelFiles& files, const ModelInfo& model) {
  const std::shared_ptr<llama::LlamaLibrary> lib = llama::LlamaLibrary::open(library_path(request));
  std::unique_ptr<LlamaEngine> engine(new LlamaEngine());
  engine->library_ = lib;
  LlamaCppRecord& r = engine->record_;
  const std::string gguf = cached_gguf(files, model, r.gguf_sha256);
  r.gguf_export_revision = kGgufExportRevision;
  engine->model_ = std::make_unique<llama::LlamaModel>(lib, gguf);
  engine->session_ = std::make_unique<llama::LlamaSession>(*engine->model_, request.settings);
  const llama::LlamaIdentity& id = lib->identity();
  r.library = id.library;
  r.library_sha256 = id.library_sha256;
  r.ggml_version = id.ggml_version;
  r.ggml_commit = id.ggml_commit;
  r.cpu_backend = id.cpu_backend;
  r.system_info = id.system_info;
  r.kv_type = request.settings.kv_type;
  r.flash_attn = request.settings.flash_attn;
  r.threads = request.settings.threads;
  r.n_ubatch = engine->session_->ubatch();
  return engine;
}

void LlamaEngine::check_prompt(const std::string& who, const std::string& text, const std::vector<int64_t>& ids) const {
  const std::vector<int64_t> theirs = model_->tokenize(text);
  if (theirs != ids)
    throw Error(who + ": llama.cpp tokenizes the prompt as " + ids_to_json(theirs) + ", genrepro as " + ids_to_json(ids) +
                "; the engines would not be given the same input");
}

void LlamaEngine::check_prompts(const RunPlan& plan) const {
  std::set<int64_t> checked;
  for (int64_t index : plan.selected) {
    const ExpandedRun& run = plan.runs[static_cast<size_t>(index)];
    if (run.params.engine != Engine::llama_cpp || !checked.insert(run.prompt_index).second) continue;
    check_prompt("run " + run.id, run.prompt, plan.prompt_ids[static_cast<size_t>(index)]);
  }
}

GenerationResult LlamaEngine::run(const std::string& run_id, const std::vector<int64_t>& prompt_ids, const RunParams& params,
                                  int64_t eos_token_id, const TokenText& token_text, const TokenObserver& on_token) {
  session_->reset();
  const std::unique_ptr<llama::LlamaSampler> sampler = sampler_for(library_, params, model_->vocab_size(), prompt_ids);
  LlamaLogitsSource source(*session_, model_->context_size(), params.use_cache, *sampler, run_id);
  GenerationResult result = run_generation(source, prompt_ids, params, eos_token_id, token_text, on_token);
  source.check_last(result.output_ids);
  return result;
}

}  // namespace genrepro
