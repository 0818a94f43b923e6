// The one evidence reader (read_evidence, read_golden): what it refuses, and that every message
// names the file, the JSON path, the value found and what is allowed, in one line. Each case
// edits one field of valid evidence written by the writer, so the edit is the only problem.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/evidence.hpp"
#include "evidence_builders.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;

constexpr const char* kRegenerate = "; regenerate it with 'genrepro run' (format: docs/evidence-format.md)";

// Two runs: three greedy steps, and a first prediction (max_new_tokens 0).
Evidence valid_evidence() {
  RunRecord first = make_run("first", DecodeMode::sample, {});
  first.params.max_new_tokens = 0;
  first.params.top_candidates = 2;
  first.result.steps = {test::make_step(0, 0, {{10, 0.6}, {11, 0.3}})};
  first.result.steps[0].token_id = std::nullopt;
  first.result.steps[0].token_text = "";
  first.result.steps[0].kept = 2;  // sampled: both listed candidates are kept
  Evidence e = make_evidence({make_run("a", DecodeMode::greedy, greedy_steps()), first});
  test::make_consistent(e);
  return e;
}

class EvidenceRead : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("genrepro_read_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // The error reading `text` gives, with the file's path replaced by "e.json".
  std::string error_reading(const std::string& text) {
    const std::string path = write("e.json", text);
    const std::string what = error_of([&] { read_evidence(path); });
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return what.rfind(path, 0) == 0 ? "e.json" + what.substr(path.size()) : what;
  }
  // The error reading valid evidence after `edit`.
  std::string error_after(const std::function<void(OrderedJson&)>& edit) {
    OrderedJson doc = evidence_to_json(valid_evidence());
    edit(doc);
    return error_reading(doc.dump(2));
  }
  static std::string error_of(const std::function<void()>& f) {
    try {
      f();
    } catch (const EvidenceError& e) {
      return e.what();
    }
    return "(no EvidenceError)";
  }
  fs::path dir_;
};

TEST_F(EvidenceRead, ValidEvidenceReadsBackAsWritten) {
  const Evidence e = valid_evidence();
  EXPECT_EQ(evidence_text(read_evidence(write("e.json", evidence_text(e)))), evidence_text(e));
}

// Strict numerics: the kernel revision is what decides the bits, so it is read back, compared (the
// identity block) and required; no CPU kernel block is written for it.
TEST_F(EvidenceRead, StrictNumericsReadBackWithTheirKernelRevision) {
  Evidence e = valid_evidence();
  NumericsRecord n;
  n.mode = NumericsMode::strict;
  n.kernel_revision = "strict-1";
  n.execution = {{"batch", 2}, {"kernel_isa", "avx2"}};
  e.numerics = n;
  const Evidence back = read_evidence(write("e.json", evidence_text(e)));
  ASSERT_TRUE(back.numerics.has_value());
  EXPECT_EQ(back.numerics->mode, NumericsMode::strict);
  EXPECT_EQ(back.numerics->kernel_revision, "strict-1");
  EXPECT_FALSE(back.numerics->kernels.has_value());
  EXPECT_EQ(numerics_identity_json(*back.numerics).dump(), R"({"mode":"strict","kernel_revision":"strict-1"})");
  EXPECT_EQ(evidence_text(back), evidence_text(e));

  OrderedJson doc = evidence_to_json(e);
  doc["numerics"].erase("kernel_revision");
  EXPECT_EQ(error_reading(doc.dump(2)), "e.json: numerics.kernel_revision: expected a string, found nothing (the key is missing)" +
                                           std::string(kRegenerate));
  doc["numerics"]["kernel_revision"] = "";
  EXPECT_THAT(error_reading(doc.dump(2)), HasSubstr("e.json: numerics.kernel_revision: \"\"; allowed: the name of"));
  doc["numerics"]["mode"] = "exact";
  EXPECT_EQ(error_reading(doc.dump(2)), "e.json: numerics.mode: \"exact\" is not a numerics mode; allowed: reference, tiled, strict");
}

TEST_F(EvidenceRead, BadFilesNameTheFileAndTheProblem) {
  const std::string missing = (dir_ / "nope.json").string();
  EXPECT_EQ(error_of([&] { read_evidence(missing); }), missing + ": no such file; give an evidence file written by 'genrepro run'");
  EXPECT_EQ(error_of([&] { read_evidence(dir_.string()); }),
            dir_.string() + ": is a directory, expected an evidence file; give a file (only GOLDEN may be a directory)");
  EXPECT_THAT(error_reading("{\"schema\": "), HasSubstr("e.json: invalid JSON: parse error at line 1, column 12"));
  EXPECT_EQ(error_reading("{\"schema\": \"genrepro.evidence/1\", \"x\": \"\xC0\xAF\"}"),
            "e.json: line 1, column 41: invalid UTF-8 (byte 0xC0); save the file as UTF-8; give an evidence file written by 'genrepro run'");
  EXPECT_THAT(error_reading(std::string(65, '[') + std::string(65, ']')), HasSubstr("e.json: line 1, column 65: JSON nested deeper than 64 levels"));
  EXPECT_THAT(error_reading("{\"schema\": \"genrepro.evidence/1\", \"schema\": \"genrepro.evidence/1\"}"),
              HasSubstr("e.json: schema: key given twice"));
}

TEST_F(EvidenceRead, NotEvidenceAndOtherVersionsAreNamed) {
  // Both forms the verbs' messages have always had: "schema: missing" and "not genrepro evidence".
  EXPECT_EQ(error_reading("{\"runs\": []}"),
            "e.json: schema: missing; not genrepro evidence (no top-level \"schema\" key); give an evidence file written by 'genrepro run'");
  EXPECT_EQ(error_reading("[1, 2]"),
            "e.json: schema: missing; not genrepro evidence (no top-level \"schema\" key); give an evidence file written by 'genrepro run'");
  EXPECT_EQ(error_after([](OrderedJson& d) { d["schema"] = "genrepro.evidence/0"; }),
            "e.json: schema string \"genrepro.evidence/0\", this build reads \"genrepro.evidence/1\"; regenerate the evidence with "
            "this genrepro (or use the genrepro that wrote it)");
}

TEST_F(EvidenceRead, AMistypedOrMissingFieldIsNamedByItsJsonPath) {
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["steps"][1]["top"][0]["prob"] = "high"; }),
            std::string("e.json: runs[0].steps[1].top[0].prob: expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), found string "
                        "\"high\"") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0].erase("stop"); }),
            std::string("e.json: runs[0].stop: expected an object, found nothing (the key is missing)") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["stop"]["reason"] = "tired"; }),
            std::string("e.json: runs[0].stop.reason: expected \"eos\", \"max_new_tokens\" or \"context_full\", found string \"tired\"") +
                kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["params"]["top_k"] = "all"; }),
            std::string("e.json: runs[0].params.top_k = \"all\" is not allowed; allowed: an integer") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][1]["index"] = 9223372036854775808ull; }),
            std::string("e.json: runs[1].index: expected an integer, found number 9223372036854775808") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["environment"]["threads"]["intra_op"] = 4294967296ll; }),
            std::string("e.json: environment.threads.intra_op: expected an integer from -2147483648 to 2147483647, found number "
                        "4294967296") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["model"]["files"]["model.safetensors"]["bytes"] = -1; }),
            std::string("e.json: model.files.model.safetensors.bytes: expected a non-negative integer, found number -1") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["environment"]["numerics_env"]["OMP_NUM_THREADS"] = 4; }),
            std::string("e.json: environment.numerics_env.OMP_NUM_THREADS: expected a string or null, found number 4") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"] = OrderedJson::object(); }),
            std::string("e.json: runs: expected an array, found an object") + kRegenerate);
}

TEST_F(EvidenceRead, RealsFollowTheWritersRule) {
  // The writer's spellings of non-finite values parse (anything else is refused as a type), and
  // then the meaning stage refuses them where a value must be finite: every step value
  // (docs/validation.md), so a NaN never reaches a diff or a report.
  Evidence e = valid_evidence();
  e.runs[0].result.steps[0].margin = std::nan("");
  const std::string path = write("inf.json", evidence_text(e));
  EXPECT_EQ(error_of([&] { read_evidence(path); }),
            path + ": runs[0].steps[0].margin: found \"NaN\"; allowed: a number from 0 to 1 (a difference of two "
                   "probabilities, best first)" + kRegenerate);
  e.runs[0].result.steps[0].margin = 0.3;
  e.runs[0].result.steps[0].entropy = std::numeric_limits<double>::infinity();
  const std::string inf = write("inf.json", evidence_text(e));
  EXPECT_NE(error_of([&] { read_evidence(inf); }).find("runs[0].steps[0].entropy: found \"Infinity\"; allowed: a number from 0 to log(vocab_size)"),
            std::string::npos);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["steps"][0]["entropy"] = "inf"; }),
            std::string("e.json: runs[0].steps[0].entropy: expected a number (or \"NaN\", \"Infinity\", \"-Infinity\"), found string "
                        "\"inf\"") + kRegenerate);
}

TEST_F(EvidenceRead, VolatileFieldsMayBeAbsentEverythingElseMayNot) {
  OrderedJson golden = strip_volatile(evidence_to_json(valid_evidence()));
  const Evidence back = read_evidence(write("golden.json", golden.dump(2) + "\n"));
  EXPECT_FALSE(back.created_utc.has_value());
  EXPECT_FALSE(back.environment.threads.runs_concurrently.has_value());
  EXPECT_FALSE(back.runs[0].result.seconds.has_value());
  EXPECT_EQ(error_after([](OrderedJson& d) { d["environment"].erase("torch_config"); }),
            std::string("e.json: environment.torch_config: expected a string, found nothing (the key is missing)") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["created_utc"] = 5; }),
            std::string("e.json: created_utc: expected a string, found number 5") + kRegenerate);
}

TEST_F(EvidenceRead, KeysKeepTheFilesOrder) {
  // numerics_env is written in numerics_env_names() order, not alphabetically; reading must keep
  // it, or merge would write shards back in another order than the unsharded run.
  Evidence e = valid_evidence();
  e.environment.numerics_env = {{"OMP_NUM_THREADS", std::nullopt}, {"ATEN_CPU_CAPABILITY", "AVX2"}};
  const Evidence back = read_evidence(write("order.json", evidence_text(e)));
  ASSERT_EQ(back.environment.numerics_env.size(), 2u);
  EXPECT_EQ(back.environment.numerics_env[0].first, "OMP_NUM_THREADS");
  EXPECT_EQ(back.environment.numerics_env[1].first, "ATEN_CPU_CAPABILITY");
}

TEST_F(EvidenceRead, WhatMustHoldBetweenFieldsIsChecked) {
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][1]["id"] = d["runs"][0]["id"]; }),
            "e.json: run id \"" + valid_evidence().runs[0].id +
                "\" appears twice (runs[0] and runs[1]); ids must be unique — regenerate or merge the evidence with genrepro");
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["prompt_ids"] = OrderedJson::array(); }),
            std::string("e.json: runs[0].prompt_ids: found an empty array; allowed: at least 1 token") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["steps"][2]["step"] = 5; }),
            std::string("e.json: runs[0].steps[2].step: found 5; allowed: 2 (steps are numbered 0, 1, 2, ... in order)") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["steps"].erase(2); }),
            std::string("e.json: runs[0].steps: holds 2 steps for 3 output ids; allowed: one step per output id (one step and no ids "
                        "when max_new_tokens is 0)") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["steps"][1]["token_id"] = 11; }),
            std::string("e.json: runs[0].steps[1].token_id: found 11; allowed: output_ids[1] = 20") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["steps"][1]["token_id"] = nullptr; }),
            std::string("e.json: runs[0].steps[1].token_id: found null; allowed: output_ids[1] = 20") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][1]["steps"][0]["token_id"] = 10; }),
            std::string("e.json: runs[1].steps[0].token_id: found 10; allowed: null (max_new_tokens is 0)") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][1]["output_ids"] = {10}; }),
            std::string("e.json: runs[1].steps: holds 1 steps for 1 output ids; allowed: one step per output id (one step and no ids "
                        "when max_new_tokens is 0)") + kRegenerate);
  EXPECT_EQ(error_after([](OrderedJson& d) { d["runs"][0]["stop"]["step"] = 50; }),
            std::string("e.json: runs[0].stop.step: found 50; allowed: 3, the number of output ids") + kRegenerate);
}

TEST_F(EvidenceRead, GoldenDirectoryPoolsRunsAndRejectsOverlaps) {
  const auto consistent = [](const std::string& id) {
    Evidence e = make_evidence({make_run(id, DecodeMode::greedy, greedy_steps())});
    test::make_consistent(e);
    return e;
  };
  const Evidence a = consistent("a");
  const Evidence b = consistent("b");
  write("golden/a.json", evidence_text(a));
  write("golden/b.json", evidence_text(b));
  write("golden/.b.json.tmp", "not evidence: hidden files are skipped");
  write("golden/notes.txt", "not *.json: skipped");
  const std::vector<EvidenceFile> golden = read_golden((dir_ / "golden").string());
  ASSERT_EQ(golden.size(), 2u);
  EXPECT_EQ(golden[0].path, (dir_ / "golden" / "a.json").string());
  EXPECT_EQ(golden[1].evidence.runs.at(0).id, b.runs.at(0).id);

  write("golden/c.json", evidence_text(a));
  EXPECT_EQ(error_of([&] { read_golden((dir_ / "golden").string()); }),
            (dir_ / "golden" / "c.json").string() + ": run id \"" + a.runs.at(0).id + "\" is also in " + (dir_ / "golden" / "a.json").string() +
                "; golden files must not overlap — remove the stale file (bless writes one file per experiment)");
  fs::create_directories(dir_ / "empty");
  EXPECT_THAT(error_of([&] { read_golden((dir_ / "empty").string()); }), HasSubstr("golden directory holds no *.json evidence files"));
  const std::vector<EvidenceFile> one = read_golden((dir_ / "golden" / "b.json").string());
  ASSERT_EQ(one.size(), 1u);
}

}  // namespace
}  // namespace genrepro

namespace genrepro {
namespace {

// Found by fuzz/evidence_fuzz.cpp (a valid file must diff as agreeing with itself): a step whose
// candidate list names one token twice made diff pair the wrong entries. The reader refuses it.
TEST(EvidenceReadFuzzFindings, RepeatedCandidateIdIsRefused) {
  const std::string path = std::string(GENREPRO_SOURCE_DIR) + "/tests/data/fuzz/evidence-repeated-candidate.json";
  try {
    read_evidence_file(path);
    FAIL() << "read " << path;
  } catch (const EvidenceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("evidence-repeated-candidate.json: runs[0].steps[2].top["), std::string::npos) << what;
    EXPECT_NE(what.find("allowed: each token once in a step's candidates"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace genrepro
