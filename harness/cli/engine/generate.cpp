// genrepro generate, the part that runs the model (the flags are checked in cli/generate.cpp).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/engine/engine_verbs.hpp"
#include "engine/batched_decoder.hpp"
#include "engine/generation_loop.hpp"
#include "engine/llama_engine.hpp"
#include "engine/runner.hpp"
#include "plan/plan_checks.hpp"
#if GENREPRO_WITH_LIBTORCH
#include "engine/gpt2_model.hpp"
#endif
#include "engine/logits_source.hpp"
#include "engine/numerics_probe.hpp"
#include "engine/numerics_setup.hpp"
#include "engine/run_environment.hpp"
#include "strict/strict_gpt2.hpp"
#include "strict/thread_team.hpp"
#include "model/model_files.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/build_features.hpp"
#include "util/errors.hpp"
#include "util/utf8.hpp"

namespace genrepro::cli {

namespace {

// Bytes at the end of `bytes` that begin a UTF-8 sequence not yet complete: held back while
// streaming, so a character split across two tokens is printed whole, never as U+FFFD.
size_t incomplete_tail(const std::string& bytes) {
  const size_t n = bytes.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(bytes[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const size_t needed = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

// Prints prompt + continuation as it grows; what it prints in all is the same text the
// non-streaming output shows (decode_for_display of every id).
class TextStream {
 public:
  TextStream(const Gpt2Tokenizer& tokenizer, std::vector<int64_t> prompt_ids, std::ostream& out)
      : tokenizer_(tokenizer), ids_(std::move(prompt_ids)), out_(out) {
    emit(false);
  }
  void add(int64_t id) {
    ids_.push_back(id);
    emit(false);
  }
  void finish() {
    emit(true);
    out_ << "\n" << std::flush;
  }

 private:
  void emit(bool all) {
    const std::string raw = tokenizer_.decode(ids_);
    const std::string shown = replace_invalid_utf8(all ? raw : raw.substr(0, raw.size() - incomplete_tail(raw)));
    if (shown.size() > printed_) out_ << shown.substr(printed_) << std::flush;
    printed_ = std::max(printed_, shown.size());
  }

  const Gpt2Tokenizer& tokenizer_;
  std::vector<int64_t> ids_;
  std::ostream& out_;
  size_t printed_ = 0;
};

// The experiment files' rule (plan/run_plan.cpp): the prompt and the cap must fit the context.
void check_fits_context(const std::vector<int64_t>& prompt_ids, const RunParams& params, const Gpt2Config& config,
                        const std::string& config_path) {
  const int64_t prompt = static_cast<int64_t>(prompt_ids.size());
  const std::string context = "this model's context of " + std::to_string(config.n_positions) +
                              " tokens (n_positions in " + config_path + ")";
  if (prompt > config.n_positions)
    throw UsageError("--prompt encodes to " + std::to_string(prompt) + " tokens; allowed: at most " + context +
                     "; shorten the prompt");
  const int64_t room = config.n_positions - prompt;
  if (params.max_new_tokens > room)
    throw UsageError("--max-new-tokens " + std::to_string(params.max_new_tokens) + ": allowed: at most " +
                     std::to_string(room) + " for this prompt (" + std::to_string(prompt) + " tokens) with " + context);
}

std::string format_rate(double tokens_per_second) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", tokens_per_second);
  return text;
}

// The path line's first part, whatever the numerics.
std::string loop_path(const GenerateRequest& o) {
  return o.params.use_cache ? "path: KV cache (generate's default; --no-cache runs the article's recompute loop)"
                            : "path: recompute, the article's use_cache=False loop (--no-cache)";
}

#if GENREPRO_WITH_LIBTORCH
// The same paths `run` takes (engine/runner.cpp), so generate prints exactly the tokens `run`
// records for the same parameters: the probe, then the batched decoder with one run, or the
// article's recompute loop.
GenerationResult generate_one(const Gpt2Model& model, const Gpt2Tokenizer& tokenizer,
                              const std::vector<int64_t>& prompt_ids, const GenerateRequest& o,
                              const NumericsSetup& numerics, const TokenObserver& on_token) {
  const TokenText token_text = [&tokenizer](int64_t id) { return tokenizer.token_text(id); };
  if (!o.params.use_cache) {
    const auto source = make_recompute_source(model, numerics.batch.layout);
    return run_generation(*source, prompt_ids, o.params, model.config().eos_token_id, token_text, on_token);
  }
  const std::vector<DecodeJob> jobs = {DecodeJob{&prompt_ids, &o.params, on_token, {}}};
  bool handed_out = false;
  GenerationResult result;
  decode_batched(
      model, jobs, numerics.batch,
      [&]() -> std::optional<size_t> {
        if (handed_out) return std::nullopt;
        handed_out = true;
        return 0;
      },
      token_text, [&](size_t, GenerationResult r) { result = std::move(r); });
  return result;
}

std::string path_line(const GenerateRequest& o, const NumericsSetup& numerics) {
  std::string line = loop_path(o);
  line += "; numerics " + std::string(to_string(numerics.record.mode));
  if (numerics.record.mode == NumericsMode::tiled) line += " (tile " + std::to_string(numerics.record.tile) + ")";
  line += " on " + std::to_string(numerics.batch.decode_blas_threads) + " BLAS thread" +
          (numerics.batch.decode_blas_threads == 1 ? "" : "s");
  if (const auto& k = numerics.record.kernels)
    line += "; cpu kernels " + std::string(to_string(k->setting)) + " (" + k->blas_core + ", " + k->aten_capability + ")";
  return line;
}

// Libtorch's forward, the numerics probe, then run's paths (generate_one).
GenerationResult generate_with_torch(const GenerateRequest& o, const ModelFiles& files, const Gpt2Tokenizer& tokenizer,
                                     const std::vector<int64_t>& prompt_ids, const TokenObserver& on_token, Console& io) {
  const Gpt2Model model = Gpt2Model::load(files, tokenizer.vocab_size());
  // Said once the files have loaded: a broken model's error (which names the file) stays the
  // only line on stderr.
  io.err << files.source_note << "\n";
  prepare_runtime_for_runs();
  const NumericsProbeResult probe = probe_numerics(model, probe_limits_for(o.numerics, o.threads, 1));
  const NumericsSetup numerics = choose_numerics(o.numerics, probe, o.threads, 1);
  io.err << path_line(o, numerics) << "\n";
  return generate_one(model, tokenizer, prompt_ids, o, numerics, on_token);
}

#endif  // GENREPRO_WITH_LIBTORCH

// genrepro's own forward: the cache or the recompute loop give a run the bits run's batches give
// it, so one source serves, on every thread.
GenerationResult generate_strict(const GenerateRequest& o, const ModelFiles& files, const Gpt2Tokenizer& tokenizer,
                                 const std::vector<int64_t>& prompt_ids, const TokenObserver& on_token, Console& io) {
  strict::ThreadTeam team(o.threads);
  const strict::StrictGpt2 model = strict::StrictGpt2::load(files, tokenizer.vocab_size(), team);
  io.err << files.source_note << "\n";
  prepare_runtime_for_runs();
  io.err << loop_path(o) << "; numerics strict (" << strict::kStrictKernelRevision << ", " << model.kernel_isa() << ") on " << o.threads
         << (o.threads == 1 ? " thread" : " threads") << "\n";
  const int64_t reserve = std::min<int64_t>(static_cast<int64_t>(prompt_ids.size()) + o.params.max_new_tokens,
                                            model.config().n_positions);
  const auto source = o.params.use_cache ? make_strict_cached_source(model, team, reserve)
                                         : make_strict_recompute_source(model, team);
  const TokenText token_text = [&tokenizer](int64_t id) { return tokenizer.token_text(id); };
  return run_generation(*source, prompt_ids, o.params, model.config().eos_token_id, token_text, on_token);
}

// llama.cpp's forward (docs/engines.md): the loop and the chain are the same; every pick is also
// llama.cpp's own sampler chain's.
GenerationResult generate_llama(const GenerateRequest& o, const ModelFiles& files, const Gpt2Tokenizer& tokenizer,
                                const std::vector<int64_t>& prompt_ids, const TokenObserver& on_token, Console& io) {
  LlamaRequest request{o.llama_lib, o.llama};
  request.settings.threads = o.threads;
  const std::unique_ptr<LlamaEngine> engine =
      LlamaEngine::load(request, files, describe_model(files, read_gpt2_config(files.config)));
  engine->check_prompt("--prompt", o.prompt, prompt_ids);
  io.err << files.source_note << "\n";
  const LlamaCppRecord& r = engine->record();
  io.err << loop_path(o) << "; engine llama.cpp (ggml " << r.ggml_version << ", " << r.cpu_backend << ", KV " << r.kv_type
         << ", flash attention " << r.flash_attn << ") on " << o.threads << (o.threads == 1 ? " thread" : " threads") << "\n";
  const TokenText token_text = [&tokenizer](int64_t id) { return tokenizer.token_text(id); };
  return engine->run("generate", prompt_ids, o.params, read_gpt2_config(files.config).eos_token_id, token_text, on_token);
}

}  // namespace

int generate_text(const GenerateRequest& o, Console& io) {
  const bool strict_numerics = o.numerics.mode == NumericsMode::strict;
  // refused before the model loads (and again in the record); strict numerics use no BLAS nor ATen kernel
  if (!strict_numerics) loaded_kernels(o.numerics.cpu_kernels);
  const RunParams& params = o.params;
  const ModelFiles files = resolve_chosen_model(o.model);

  const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::from_files(files.vocab, files.merges);
  check_vocabularies(read_gpt2_config(files.config), files.config, tokenizer, files.vocab);
  const std::vector<int64_t> prompt_ids = tokenizer.encode(o.prompt);
  if (prompt_ids.empty())
    throw UsageError("--prompt is empty; allowed: text that encodes to at least 1 token");
  check_fits_context(prompt_ids, params, read_gpt2_config(files.config), files.config);

  std::optional<TextStream> stream;
  if (o.stream) stream.emplace(tokenizer, prompt_ids, io.out);
  const TokenObserver on_token = [&](int64_t id) {
    if (stream) stream->add(id);
  };
  const auto generate = [&] {
    if (params.engine == Engine::llama_cpp) return generate_llama(o, files, tokenizer, prompt_ids, on_token, io);
#if GENREPRO_WITH_LIBTORCH
    return strict_numerics ? generate_strict(o, files, tokenizer, prompt_ids, on_token, io)
                           : generate_with_torch(o, files, tokenizer, prompt_ids, on_token, io);
#else
    if (!strict_numerics) throw UsageError(std::string("--numerics ") + to_string(o.numerics.mode) + ": " + kLibtorchNeeded);
    return generate_strict(o, files, tokenizer, prompt_ids, on_token, io);
#endif
  };
  const GenerationResult result = generate();

  if (stream) {
    stream->finish();
  } else if (o.ids) {
    io.out << nlohmann::json(result.output_ids).dump() << "\n";
  } else {
    std::vector<int64_t> all = result.prompt_ids;
    all.insert(all.end(), result.output_ids.begin(), result.output_ids.end());
    io.out << tokenizer.decode_for_display(all) << "\n";
  }
  io.err << "stop: " << to_string(result.stop_reason) << " after " << result.stop_step << " new tokens ("
         << to_string(params.sampling.mode) << ", " << (params.use_cache ? "kv cache" : "recompute") << ")\n";
  if (result.seconds && *result.seconds > 0 && !result.output_ids.empty())
    io.err << "speed: " << format_rate(static_cast<double>(result.output_ids.size()) / *result.seconds)
           << " new tokens/s in the loop (loading the model and the probe aside)\n";
  return kExitOk;
}

}  // namespace genrepro::cli
