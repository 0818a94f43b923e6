// --numerics, --batch, --allow-inexact-batch on run and generate (docs/numerics.md):
// bad values are one line and exit 2 before anything runs; a batch the probe did not prove is
// refused unless allowed; --check-equivalence compares batched runs with the same runs alone;
// generate's path line, its context limit (exit 2, as in experiment files), and --stream, whose
// text is the non-streaming output byte for byte. Strict numerics: the flags they would ignore
// are refused, and their bytes hold across threads, batch and vector code.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_inprocess/cli_case.hpp"
#include "support/env_guard.hpp"
#include "support/text_match.hpp"

namespace genrepro::test {
namespace {

const std::string kGrid = source_path("experiments/bench/grid60.json");

std::vector<std::string> gen(std::vector<std::string> extra) {
  std::vector<std::string> args = {"generate", "--model", tiny_model(), "--prompt", "the river bank was",
                                   "--max-new-tokens", "6", "--temperature", "1", "--top-p", "0.9", "--seed", "3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

const std::vector<CliCase> kCases = {
    {"numerics_unknown", {"run", kGrid, "--numerics", "fast", "--out", "{scratch}/e.json"}, 2, "",
     R"re(--numerics fast: allowed: reference, tiled, strict)re", Stderr::one_line},
    {"batch_zero", {"run", kGrid, "--batch", "0", "--out", "{scratch}/e.json"}, 2, "",
     R"re(--batch 0: allowed: a whole number from 1 to 256)re", Stderr::one_line},
    {"inexact_with_tiled", {"run", kGrid, "--numerics", "tiled", "--allow-inexact-batch", "--out", "{scratch}/e.json"}, 2,
     "", R"re(--allow-inexact-batch: only for --numerics reference)re", Stderr::one_line},
    // The tiny fixture's shapes keep a lone row's bits only in small batches (the probe measures
    // it); 200 rows are far beyond any proof, so the run is refused before the first token.
    {"batch_beyond_proof", {"run", kGrid, "--model", tiny_model(), "--numerics", "reference", "--batch", "200", "--out", "{scratch}/e.json"}, 2, "",
     R"re(--batch 200: the numerics probe proved at most [0-9]+ rows keep the reference bits .*--allow-inexact-batch)re"},
    {"generate_numerics_unknown", gen({"--numerics", "exact"}), 2, "", R"re(--numerics exact: allowed: reference, tiled, strict)re",
     Stderr::one_line},
    {"inexact_with_strict", {"run", kGrid, "--numerics", "strict", "--allow-inexact-batch", "--out", "{scratch}/e.json"}, 2,
     "", R"re(--allow-inexact-batch: only for --numerics reference \(strict batches are exact by construction\))re",
     Stderr::one_line},
    {"cpu_kernels_with_strict", {"run", kGrid, "--numerics", "strict", "--cpu-kernels", "native", "--out", "{scratch}/e.json"},
     2, "", R"re(--cpu-kernels native: not used by --numerics strict .*GENREPRO_STRICT_ISA)re", Stderr::one_line},
    {"generate_cpu_kernels_with_strict", gen({"--numerics", "strict", "--cpu-kernels", "portable"}), 2, "",
     R"re(--cpu-kernels portable: not used by --numerics strict)re", Stderr::one_line},
    {"generate_strict_path_line", gen({"--numerics", "strict"}), 0, "",
     R"re(numerics strict \(strict-1, (plain|avx2|avx512|neon)\) on [0-9]+ threads?)re"},
    {"run_strict_line",
     {"run", source_path("experiments/article/greedy.json"), "--model", tiny_model(), "--numerics", "strict", "--out",
      "{scratch}/e.json"},
     0, "", R"re(numerics strict \(strict-1\))re"},
    {"generate_threads_bound", gen({"--threads", "100000"}), 2, "", R"re(--threads 100000: allowed: a whole number from 1 to 256)re",
     Stderr::one_line},
    {"generate_beyond_context",
     {"generate", "--model", tiny_model(), "--prompt", "the river bank was", "--max-new-tokens", "500"}, 2, "",
     R"re(--max-new-tokens 500: allowed: at most 124 for this prompt \(4 tokens\) with this model's context of 128 tokens)re"},
    {"generate_path_line", gen({}), 0, "", R"re(path: KV cache \(generate's default; --no-cache runs the article's recompute loop\); numerics strict \(strict-1, [a-z0-9]+\) on [0-9]+ threads?)re"},
    {"generate_path_line_recompute", gen({"--no-cache"}), 0, "", R"re(path: recompute, the article's use_cache=False loop)re"},
    {"stream_with_ids", gen({"--stream", "--ids"}), 2, "", R"re(--stream cannot be combined with --ids)re", Stderr::one_line},
    {"check_equivalence_batched",
     {"run", source_path("experiments/article/eos.json"), "--model", tiny_model(), "--check-equivalence", "--numerics", "tiled"}, 0,
     R"re(batched runs \(batch [0-9]+\) equal the same runs decoded alone, byte for byte \(numerics tiled\))re", ""},
};

class NumericsCase : public ::testing::TestWithParam<CliCase> {};
TEST_P(NumericsCase, ExitAndOutput) { expect_case(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Numerics, NumericsCase, ::testing::ValuesIn(kCases), CaseName{});

TEST(GenerateStream, PrintsTheSameTextAsTheWholeOutput) {
  const CliResult whole = genrepro(gen({}));
  const CliResult streamed = genrepro(gen({"--stream"}));
  ASSERT_EQ(whole.exit, 0) << whole.err;
  ASSERT_EQ(streamed.exit, 0) << streamed.err;
  EXPECT_EQ(streamed.out, whole.out);
  EXPECT_FALSE(whole.out.empty());
}

TEST(GenerateNumerics, TiledAndReferenceBothRunAndSayWhichTheyUsed) {
  const CliResult tiled = genrepro(gen({"--numerics", "tiled", "--ids"}));
  ASSERT_EQ(tiled.exit, 0) << tiled.err;
  EXPECT_NE(tiled.err.find("numerics tiled (tile "), std::string::npos) << tiled.err;
  // A tiled lone run pads its tile as any batch would: the same ids with --batch 1 and 5.
  EXPECT_EQ(genrepro(gen({"--numerics", "tiled", "--ids", "--batch", "5"})).out, tiled.out);
}

TEST(StrictNumerics, GenerateGivesTheSameIdsOnAnyThreadsAndVectorCode) {
  const CliResult base = genrepro(gen({"--numerics", "strict", "--ids"}));
  ASSERT_EQ(base.exit, 0) << base.err;
  EXPECT_FALSE(base.out.empty());
  EXPECT_EQ(genrepro(gen({"--numerics", "strict", "--ids", "--threads", "1"})).out, base.out);
  EXPECT_EQ(genrepro(gen({"--numerics", "strict", "--ids", "--no-cache", "--threads", "2"})).out, base.out);
  CliResult plain;
  {
    const EnvGuard isa("GENREPRO_STRICT_ISA", "plain");
    plain = genrepro(gen({"--numerics", "strict", "--ids"}));
  }
  ASSERT_EQ(plain.exit, 0) << plain.err;
  EXPECT_NE(plain.err.find("numerics strict (strict-1, plain)"), std::string::npos) << plain.err;
  EXPECT_EQ(plain.out, base.out);
}

TEST(StrictNumerics, AnUnknownVectorCodeIsOneLineNamingTheVariable) {
  const EnvGuard isa("GENREPRO_STRICT_ISA", "sse9");
  const CliResult r = genrepro(gen({"--numerics", "strict", "--ids"}));
  EXPECT_EQ(r.exit, 2);
  EXPECT_NE(r.err.find("GENREPRO_STRICT_ISA"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sse9"), std::string::npos) << r.err;
}

// A sixth of the 60-run grid (cached: one batch on every thread) and the article's greedy run
// (recompute), then the same one run at a time on one thread: the same evidence, logits digests
// included. (StrictRuns in the engine tests covers batch sizes, shards and the cache in depth.)
TEST(StrictNumerics, RunEvidenceIsTheSameBatchedAndAloneOnOneThread) {
  ScratchDir scratch;
  const std::string batched = (scratch.path() / "batched.json").string();
  const std::string alone = (scratch.path() / "alone.json").string();
  const std::vector<std::string> common = {"run",          kGrid,   source_path("experiments/article/greedy.json"),
                                           "--model",      tiny_model(), "--numerics", "strict", "--shard", "1/6"};
  std::vector<std::string> a = common, b = common;
  a.insert(a.end(), {"--out", batched});
  b.insert(b.end(), {"--threads", "1", "--batch", "1", "--out", alone});
  const CliResult ra = genrepro(a);
  ASSERT_EQ(ra.exit, 0) << ra.err;
  const CliResult rb = genrepro(b);
  ASSERT_EQ(rb.exit, 0) << rb.err;
  const CliResult d = genrepro({"diff", batched, alone});
  EXPECT_EQ(d.exit, 0) << d.out;
  EXPECT_TRUE(regex_search(R"re(diff: ([1-9][0-9]*) runs compared, \1 agree, 0 differ)re", d.out)) << d.out;
  EXPECT_EQ(d.out.find("not bit-identical"), std::string::npos) << d.out;
}

}  // namespace
}  // namespace genrepro::test
