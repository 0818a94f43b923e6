// The steps' logits_digest in the evidence: written last in every step that has it, read back as
// written, optional on read (evidence from before it reads as ever), its form and its presence at
// every step of a run or none checked with one-line messages; checkpoints and merged shards carry
// it unchanged.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evidence/checkpoint.hpp"
#include "evidence/evidence.hpp"
#include "evidence_builders.hpp"
#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;

std::string digest_of(int k) {
  std::string hex = "0123456789abcdef";
  hex[15] = "0123456789abcdef"[k % 16];
  return "xxh64:" + hex;
}

std::vector<StepRecord> digested_steps() {
  std::vector<StepRecord> steps = greedy_steps();
  for (std::size_t k = 0; k < steps.size(); ++k) steps[k].logits_digest = digest_of(static_cast<int>(k));
  return steps;
}

Evidence two_runs(bool digests) {
  Evidence e = make_evidence({make_run("exp/p0/a", DecodeMode::greedy, digests ? digested_steps() : greedy_steps()),
                              make_run("exp/p0/b", DecodeMode::greedy, digests ? digested_steps() : greedy_steps())});
  test::make_consistent(e);
  return e;
}

std::string error_of(const OrderedJson& j) {
  try {
    evidence_from_json(j, "e.json");
  } catch (const EvidenceError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LogitsDigestEvidence, WrittenLastInEveryStepAndReadBack) {
  const OrderedJson j = evidence_to_json(two_runs(true));
  const OrderedJson& step = j["runs"][0]["steps"][1];
  ASSERT_TRUE(step.contains("logits_digest"));
  EXPECT_EQ(std::prev(step.end()).key(), "logits_digest");  // every key before it keeps its place
  EXPECT_EQ(step["logits_digest"], digest_of(1));
  const Evidence back = evidence_from_json(OrderedJson::parse(j.dump()), "e.json");
  for (const RunRecord& r : back.runs)
    for (std::size_t k = 0; k < r.result.steps.size(); ++k) EXPECT_EQ(r.result.steps[k].logits_digest, digest_of(static_cast<int>(k)));
}

TEST(LogitsDigestEvidence, EvidenceWithoutDigestsReadsAndWritesAsBefore) {
  const OrderedJson j = evidence_to_json(two_runs(false));
  EXPECT_FALSE(j["runs"][0]["steps"][0].contains("logits_digest"));
  const Evidence back = evidence_from_json(OrderedJson::parse(j.dump()), "e.json");
  for (const RunRecord& r : back.runs)
    for (const StepRecord& s : r.result.steps) EXPECT_FALSE(s.logits_digest.has_value());
  EXPECT_EQ(evidence_to_json(back).dump(), j.dump());  // byte for byte
}

TEST(LogitsDigestEvidence, AMalformedDigestIsRefusedNamingPathAndForm) {
  OrderedJson j = evidence_to_json(two_runs(true));
  j["runs"][1]["steps"][2]["logits_digest"] = "xxh64:12AB";
  const std::string e = error_of(j);
  EXPECT_EQ(e.rfind("e.json: runs[1].steps[2].logits_digest: found \"xxh64:12AB\"; allowed: \"xxh64:\" and 16 lower-case hex digits", 0), 0u) << e;
  j["runs"][1]["steps"][2]["logits_digest"] = 7;
  EXPECT_NE(error_of(j).find("runs[1].steps[2].logits_digest"), std::string::npos) << error_of(j);
  EXPECT_NE(error_of(j).find("a string"), std::string::npos) << error_of(j);
}

TEST(LogitsDigestEvidence, ARunHasDigestsAtEveryStepOrAtNone) {
  OrderedJson j = evidence_to_json(two_runs(true));
  j["runs"][0]["steps"][1].erase("logits_digest");
  EXPECT_EQ(error_of(j).rfind("e.json: runs[0].steps[1].logits_digest: missing; allowed: a digest at every step, as steps[0] has", 0), 0u)
      << error_of(j);
  OrderedJson k = evidence_to_json(two_runs(false));
  k["runs"][0]["steps"][2]["logits_digest"] = digest_of(2);
  EXPECT_EQ(error_of(k).rfind("e.json: runs[0].steps[2].logits_digest: present; allowed: none, as steps[0] has none", 0), 0u)
      << error_of(k);
  // Runs are independent: one run with digests beside one without is evidence merged from two builds.
  OrderedJson m = evidence_to_json(two_runs(true));
  for (OrderedJson& s : m["runs"][1]["steps"]) s.erase("logits_digest");
  EXPECT_EQ(error_of(m), "(no error)");
}

TEST(LogitsDigestEvidence, ACheckpointCarriesTheDigests) {
  test::ScratchDir dir("logits-digest-checkpoint");
  const Evidence e = two_runs(true);
  Evidence header = e;
  header.runs.clear();
  {
    CheckpointFile f = CheckpointFile::open(dir / "out.json.checkpoint");
    f.start(checkpoint_key(header, "1/1"));
    for (const RunRecord& r : e.runs) f.append(run_to_json(r));
  }
  CheckpointFile f = CheckpointFile::open(dir / "out.json.checkpoint");
  const std::vector<RunRecord> runs = checkpoint_runs(f.read(), header, f.path());
  ASSERT_EQ(runs.size(), 2u);
  for (const RunRecord& r : runs) {
    ASSERT_EQ(r.result.steps.size(), 3u);
    for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(r.result.steps[k].logits_digest, digest_of(static_cast<int>(k)));
  }
}

}  // namespace
}  // namespace genrepro
