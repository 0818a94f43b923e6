// Encoding speed of Gpt2Tokenizer on the reference corpora (tests/reference/tokenizer/*.jsonl),
// in bytes of UTF-8 text per second. Cold: the word -> ids cache is emptied before every pass,
// so every distinct word goes through BPE once per pass. Warm: the cache already holds every
// word. bench/tokenizer_reference_speed.mjs measures gpt-tokenizer on the same strings.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/tokenizer.hpp"

namespace {

std::vector<std::string> corpus_texts() {
  std::vector<std::string> texts;
  for (const char* name : {"corpus.jsonl", "unseen.jsonl"}) {
    std::ifstream in(std::string(GENREPRO_SOURCE_DIR) + "/tests/reference/tokenizer/" + name);
    std::string line;
    while (std::getline(in, line)) texts.push_back(nlohmann::json::parse(line).at("text").get<std::string>());
  }
  return texts;
}

int64_t total_bytes(const std::vector<std::string>& texts) {
  int64_t n = 0;
  for (const std::string& t : texts) n += static_cast<int64_t>(t.size());
  return n;
}

size_t encode_all(const genrepro::Gpt2Tokenizer& tokenizer, const std::vector<std::string>& texts) {
  size_t ids = 0;
  for (const std::string& t : texts) ids += tokenizer.encode(t).size();
  return ids;
}

void BM_EncodeCorpusCold(benchmark::State& state) {
  const auto tokenizer = genrepro::Gpt2Tokenizer::from_directory(GENREPRO_BENCH_TOKENIZER_DIR);
  const std::vector<std::string> texts = corpus_texts();
  for (auto _ : state) {
    state.PauseTiming();
    tokenizer.clear_cache();
    state.ResumeTiming();
    benchmark::DoNotOptimize(encode_all(tokenizer, texts));
  }
  state.SetBytesProcessed(state.iterations() * total_bytes(texts));
  state.counters["strings"] = static_cast<double>(texts.size());
}

void BM_EncodeCorpusWarm(benchmark::State& state) {
  const auto tokenizer = genrepro::Gpt2Tokenizer::from_directory(GENREPRO_BENCH_TOKENIZER_DIR);
  const std::vector<std::string> texts = corpus_texts();
  encode_all(tokenizer, texts);
  for (auto _ : state) benchmark::DoNotOptimize(encode_all(tokenizer, texts));
  state.SetBytesProcessed(state.iterations() * total_bytes(texts));
}

// English-like prose only (the corpus is mostly unusual text): one long document.
void BM_EncodeProseWarm(benchmark::State& state) {
  const auto tokenizer = genrepro::Gpt2Tokenizer::from_directory(GENREPRO_BENCH_TOKENIZER_DIR);
  std::string text;
  constexpr size_t kProseBytes = 1 << 20;
  while (text.size() < kProseBytes) {
    text += "The river bank was quiet in the morning, and the model sampled the next token from the "
            "distribution it had computed; temperature 0.7 made it sharper, top-p 0.9 kept the nucleus. ";
  }
  tokenizer.encode(text);
  for (auto _ : state) benchmark::DoNotOptimize(tokenizer.encode(text).size());
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}

void BM_LoadTokenizer(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(genrepro::Gpt2Tokenizer::from_directory(GENREPRO_BENCH_TOKENIZER_DIR).vocab_size());
  }
}

}  // namespace

BENCHMARK(BM_EncodeCorpusCold)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeCorpusWarm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeProseWarm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LoadTokenizer)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
