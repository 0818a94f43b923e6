// merge: shards of one run join into the unsharded evidence; anything that is not exactly the
// shards of one run (a missing shard, a shard twice, a different environment, a run from
// another experiment) is refused with a message naming the file and what differs.
#include "evidence/evidence_merge.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "params/experiment_file.hpp"
#include "util/shard.hpp"
#include "compare/evidence_diff.hpp"

namespace genrepro {
namespace {

constexpr const char* kSpec =
    R"({"name": "m", "prompts": ["a", "b"], "max_new_tokens": 1, "record": {"top_candidates": 0},
        "runs": [{"mode": "greedy"}, {"mode": "sample", "seed": [1, 2, 3]}]})";

// An "unsharded run" without a model: every expanded run with a made-up output of one token.
Evidence unsharded() {
  const ExperimentSpec spec = parse_experiment(kSpec, "experiments/m.json");
  Evidence e;
  e.genrepro = {"0.1.0", "c0ffee"};
  e.created_utc = "2026-01-01T00:00:00Z";
  // As the writer orders them (numerics_env_names()), which is not alphabetical.
  e.environment.numerics_env = {{"OMP_NUM_THREADS", std::nullopt}, {"OMP_DYNAMIC", std::nullopt}, {"ATEN_CPU_CAPABILITY", "AVX2"}};
  e.model.source = "fixture";
  e.model.config = {{"vocab_size", 50257}};
  e.model.n_positions = 1024;
  // Not 0: run 0's made-up token is id 0, and EOS as the last token would have stopped it "eos".
  e.model.eos_token_id = 50256;
  e.environment.threads = {1, 1, 1, 1};
  e.experiments.push_back({spec.name, spec.path, spec.sha256, spec.spec});
  for (size_t i = 0; i < spec.runs.size(); ++i) {
    RunRecord r;
    r.id = spec.runs[i].id;
    r.experiment = spec.name;
    r.index = static_cast<int64_t>(i);
    r.prompt_index = spec.runs[i].prompt_index;
    r.prompt = spec.runs[i].prompt;
    r.params = spec.runs[i].params;
    r.result.prompt_ids = {1};
    r.result.output_ids = {static_cast<int64_t>(i)};
    StepRecord step;
    step.token_id = static_cast<int64_t>(i);
    step.kept = 1;
    r.result.steps = {step};
    r.result.stop_step = 1;
    r.result.seconds = 0.5;
    e.runs.push_back(r);
  }
  return e;
}

Evidence shard_of(const Evidence& all, Shard s, const std::string& created) {
  Evidence e = all;
  e.created_utc = created;
  e.environment.threads.runs_concurrently = static_cast<int>(s.index);  // volatile: may differ
  e.runs.clear();
  for (const auto& r : all.runs) {
    if (shard_selects(s, r.index)) e.runs.push_back(r);
  }
  return e;
}

std::string merge_error(const std::vector<std::pair<std::string, Evidence>>& shards) {
  try {
    merge_evidence(shards);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(EvidenceMerge, ThreeShardsGiveTheUnshardedEvidence) {
  const Evidence all = unsharded();
  ASSERT_EQ(all.runs.size(), 8u);
  // Shards given out of order: the merge restores index order.
  const Evidence merged = merge_evidence({{"s3", shard_of(all, {3, 3}, "2026-01-03T00:00:00Z")},
                                          {"s1", shard_of(all, {1, 3}, "2026-01-01T00:00:00Z")},
                                          {"s2", shard_of(all, {2, 3}, "2026-01-02T00:00:00Z")}});
  Evidence expected = all;
  expected.created_utc = "2026-01-03T00:00:00Z";
  expected.environment.threads.runs_concurrently = 3;  // taken from the first file given
  EXPECT_EQ(evidence_text(merged), evidence_text(expected));
}

// Each run's steps keep their logits digests through the files (a run is in exactly one
// shard, so no two shards can hold the same run with other digests: that is refused as a run
// given twice, RefusesMissingDuplicateAndForeignRuns).
TEST(EvidenceMerge, ShardsKeepEachStepsLogitsDigest) {
  Evidence all = unsharded();
  for (RunRecord& r : all.runs) r.result.steps[0].logits_digest = "xxh64:" + std::string(15, '0') + "0123456789abcdef"[r.index % 16];
  const auto dir = std::filesystem::path(::testing::TempDir()) / "genrepro_merge_digests";
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int i = 1; i <= 2; ++i) {
    files.push_back((dir / ("shard" + std::to_string(i) + ".json")).string());
    write_evidence(files.back(), shard_of(all, {i, 2}, "2026-01-01T00:00:00Z"));
  }
  const Evidence merged = merge_evidence_files(files);
  ASSERT_EQ(merged.runs.size(), all.runs.size());
  for (std::size_t i = 0; i < all.runs.size(); ++i) {
    ASSERT_TRUE(merged.runs[i].result.steps[0].logits_digest.has_value());
    EXPECT_EQ(merged.runs[i].result.steps[0].logits_digest, all.runs[i].result.steps[0].logits_digest);
  }
  std::filesystem::remove_all(dir);
}

// Through the files, as `genrepro merge` does it: the merged file is the unsharded file, byte for
// byte, apart from the volatile fields (the reader keeps numerics_env in the file's order).
TEST(EvidenceMerge, ShardFilesMergeIntoTheUnshardedFile) {
  const Evidence all = unsharded();
  const auto dir = std::filesystem::path(::testing::TempDir()) / "genrepro_merge_files";
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  for (int i = 1; i <= 2; ++i) {
    files.push_back((dir / ("shard" + std::to_string(i) + ".json")).string());
    write_evidence(files.back(), shard_of(all, {i, 2}, "2026-01-0" + std::to_string(i) + "T00:00:00Z"));
  }
  Evidence expected = all;
  expected.created_utc = "2026-01-02T00:00:00Z";
  expected.environment.threads.runs_concurrently = 1;  // the first file's
  EXPECT_EQ(evidence_text(merge_evidence_files(files)), evidence_text(expected));
  std::filesystem::remove_all(dir);
}

TEST(EvidenceMerge, RefusesMissingDuplicateAndForeignRuns) {
  const Evidence all = unsharded();
  const Evidence s1 = shard_of(all, {1, 2}, "t"), s2 = shard_of(all, {2, 2}, "t");
  EXPECT_EQ(merge_error({{"s1.json", s1}}),
            "merge: 4 of 8 runs are in none of the files (indices 1, 3, 5, 7); give the evidence of every shard");
  EXPECT_EQ(merge_error({{"s1.json", s1}, {"s2.json", s2}, {"again.json", s1}}),
            "again.json: runs[0]: run " + all.runs[0].id + " (index 0) is also in s1.json; give each shard once");
  Evidence foreign = s2;
  foreign.runs[0].id = "m/p0/greedy-00000000";
  EXPECT_EQ(merge_error({{"s1.json", s1}, {"s2.json", foreign}}),
            "s2.json: runs[0]: id m/p0/greedy-00000000 is not the run with index 1 (" + all.runs[1].id +
                "); the file was not written by genrepro run for these experiments");
  Evidence out_of_range = s2;
  out_of_range.runs[0].index = 8;
  EXPECT_EQ(merge_error({{"s1.json", s1}, {"s2.json", out_of_range}}),
            "s2.json: runs[0]: index 8 is outside the 8 runs its experiments expand to");
}

TEST(EvidenceMerge, RefusesShardsOfDifferentRuns) {
  const Evidence all = unsharded();
  const Evidence s1 = shard_of(all, {1, 2}, "t");
  Evidence s2 = shard_of(all, {2, 2}, "t");
  s2.environment.libtorch_version = "2.0.0";
  EXPECT_EQ(merge_error({{"s1.json", s1}, {"s2.json", s2}}),
            "s2.json: build.libtorch_version differs from s1.json; only shards of one run (same genrepro build, "
            "numerics, model and experiments) can be merged");
  s2 = shard_of(all, {2, 2}, "t");
  s2.numerics = NumericsRecord{};
  s2.numerics->kernels = KernelRecord{CpuKernels::native, "SkylakeX", "AVX2"};
  EXPECT_EQ(merge_error({{"s1.json", s1}, {"s2.json", s2}}).substr(0, 30), "s2.json: numerics.cpu_kernels ");
  s2 = shard_of(all, {2, 2}, "t");
  s2.model.files["model.safetensors"] = {"ff", 1};
  EXPECT_EQ(merge_error({{"s1.json", s1}, {"s2.json", s2}}).substr(0, 16), "s2.json: model.f");
}

// Shards from two machines (a CI matrix on mixed runners): merged, each run keeps the environment
// it ran in; the file reads back to the same bytes; diff against the first machine's unsharded
// evidence agrees on every run and names where the other machine's runs differ.
TEST(EvidenceMerge, ShardsFromMixedMachinesMergeAndDiff) {
  Evidence all = unsharded();
  all.numerics = NumericsRecord{};
  all.numerics->kernels = KernelRecord{CpuKernels::portable, "Haswell", "AVX2"};
  const Evidence s1 = shard_of(all, {1, 2}, "2026-01-01T00:00:00Z");
  Evidence s2 = shard_of(all, {2, 2}, "2026-01-02T00:00:00Z");
  s2.environment.cpu.model = "AMD EPYC 9R14";
  s2.environment.cpu.flags = "fpu avx2 fma";
  const Evidence merged = merge_evidence({{"s2.json", s2}, {"s1.json", s1}});
  ASSERT_EQ(merged.runs.size(), all.runs.size());
  EXPECT_EQ(merged.environment.cpu.model, "AMD EPYC 9R14");  // the first file's
  ASSERT_EQ(merged.run_environments.size(), 1u);
  EXPECT_EQ(merged.run_environments[0].runs, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(merged.run_environments[0].environment.cpu.model, all.environment.cpu.model);
  EXPECT_EQ(environment_of_run(merged, 1).cpu.model, "AMD EPYC 9R14");
  EXPECT_EQ(environment_of_run(merged, 2).cpu.model, all.environment.cpu.model);

  const auto dir = std::filesystem::path(::testing::TempDir()) / "genrepro_merge_mixed";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "merged.json").string();
  write_evidence(file, merged);
  const Evidence back = read_evidence(file);
  EXPECT_EQ(evidence_text(back), evidence_text(merged));
  // Merging the merged file with nothing else keeps every run's environment.
  EXPECT_EQ(evidence_text(merge_evidence({{"merged.json", back}})), evidence_text(merged));

  const EvidenceDiff d = diff_evidence({{"golden.json", all}}, {file, back}, EvidenceDiffOptions{});
  EXPECT_TRUE(d.agree());
  EXPECT_TRUE(d.numerics.empty());
  std::vector<std::string> paths;
  for (const ValueDifference& v : d.environment) paths.push_back(v.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"environment.cpu.model", "environment.cpu.flags"}));
  std::filesystem::remove_all(dir);
}

// A listed run that is not in the file, or one listed twice, is refused when read.
TEST(EvidenceMerge, RunEnvironmentsAreCheckedWhenRead) {
  Evidence all = unsharded();
  Evidence s2 = shard_of(all, {2, 2}, "t");
  s2.environment.cpu.model = "other";
  Evidence merged = merge_evidence({{"s1", shard_of(all, {1, 2}, "t")}, {"s2", s2}});
  ASSERT_EQ(merged.run_environments.size(), 1u);
  OrderedJson j = evidence_to_json(merged);
  j["run_environments"][0]["runs"].push_back(1);
  try {
    evidence_from_json(j, "m.json");
    ADD_FAILURE() << "a run listed twice was accepted";
  } catch (const EvidenceError& e) {
    EXPECT_EQ(std::string(e.what()), "m.json: run_environments[0].runs[4]: run 1 is listed in two environments");
  }
  j = evidence_to_json(merged);
  j["run_environments"][0]["runs"][0] = 99;
  try {
    evidence_from_json(j, "m.json");
    ADD_FAILURE() << "a run that is not in the file was accepted";
  } catch (const EvidenceError& e) {
    EXPECT_EQ(std::string(e.what()), "m.json: run_environments[0].runs[0]: 99 is the index of no run in this file");
  }
}

TEST(Shard, ParseAndSelect) {
  const Shard s = parse_shard("2/3");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  EXPECT_FALSE(shard_selects(s, 0));
  EXPECT_TRUE(shard_selects(s, 1));
  EXPECT_TRUE(shard_selects(s, 4));
  for (const char* bad : {"0/2", "3/2", "1/0", "a/b", "1", "1/2/3", "-1/2", "/2", "1/"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("--shard ") + bad +
                                           ": expected I/N with whole numbers 1 <= I <= N <= 1000000, e.g. --shard 1/4 "
                                           "for the first of four shards");
    }
  }
}

}  // namespace
}  // namespace genrepro
