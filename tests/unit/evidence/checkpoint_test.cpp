// The checkpoint file (evidence/checkpoint.hpp): what a kill can leave behind and what a resume
// must refuse. The signals, the resume and the full disk are tested on a real process in
// tests/cli/scripts/interrupt_resume.py.
#include "evidence/checkpoint.hpp"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence_builders.hpp"
#include "support/scratch_dir.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;
using test::greedy_steps;
using test::make_evidence;
using test::make_run;

Evidence two_runs() {
  Evidence e = make_evidence({make_run("exp/p0/a", DecodeMode::greedy, greedy_steps()),
                              make_run("exp/p0/b", DecodeMode::greedy, greedy_steps())});
  test::make_consistent(e);
  return e;
}

Evidence header_of(Evidence e) {
  e.runs.clear();
  return e;
}

TEST(Checkpoint, RunsWrittenLineByLineReadBackEqual) {
  test::ScratchDir dir("checkpoint");
  const Evidence e = two_runs();
  {
    CheckpointFile f = CheckpointFile::open(dir / "out.json.checkpoint");
    f.start(checkpoint_key(header_of(e), "1/1"));
    for (const RunRecord& r : e.runs) f.append(run_to_json(r));
  }
  CheckpointFile f = CheckpointFile::open(dir / "out.json.checkpoint");
  const CheckpointContents c = f.read();
  ASSERT_FALSE(c.empty);
  EXPECT_FALSE(c.dropped_partial_line);
  EXPECT_EQ(checkpoint_key_mismatch(c.key, checkpoint_key(header_of(e), "1/1")), "");
  const std::vector<RunRecord> runs = checkpoint_runs(c, header_of(e), f.path());
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(run_to_json(runs[1]), run_to_json(e.runs[1]));  // every double bit for bit
}

TEST(Checkpoint, ACutShortLastLineIsDroppedAndCutOffBeforeAppending) {
  test::ScratchDir dir("checkpoint");
  const Evidence e = two_runs();
  const std::string path = dir / "c";
  {
    CheckpointFile f = CheckpointFile::open(path);
    f.start(checkpoint_key(header_of(e), "1/1"));
    f.append(run_to_json(e.runs[0]));
  }
  const std::string whole = test::read_bytes(path);
  test::write_bytes(path, whole + "{\"id\": \"exp/p0/b\", \"exper");  // killed mid-write
  CheckpointFile f = CheckpointFile::open(path);
  const CheckpointContents c = f.read();
  EXPECT_TRUE(c.dropped_partial_line);
  EXPECT_EQ(c.runs.size(), 1u);
  EXPECT_EQ(c.complete_bytes, whole.size());
  f.truncate_to(c.complete_bytes);
  f.append(run_to_json(e.runs[1]));
  EXPECT_EQ(f.read().runs.size(), 2u);
}

TEST(Checkpoint, DamageBeforeTheLastLineIsAnErrorNamingTheLine) {
  test::ScratchDir dir("checkpoint");
  const std::string path = dir / "c";
  {
    CheckpointFile f = CheckpointFile::open(path);
    f.start(checkpoint_key(header_of(two_runs()), "1/1"));
    f.append(OrderedJson::array({1}));
    f.append(OrderedJson::object());
  }
  try {
    CheckpointFile::open(path).read();
    FAIL() << "a damaged checkpoint was read";
  } catch (const EvidenceError& err) {
    EXPECT_THAT(err.what(), HasSubstr(": line 2: expected a JSON object"));
  }
  const std::string whole = test::read_bytes(path);
  const std::size_t second = whole.find('\n') + 1;
  test::write_bytes(path, whole.substr(0, second) + "[1]\n{}\n");  // lines without their digests
  try {
    CheckpointFile::open(path).read();
    FAIL() << "an unframed line was read";
  } catch (const EvidenceError& err) {
    EXPECT_THAT(err.what(), HasSubstr(": line 2: expected {\"sha256\": \"<64 hex>\", \"line\": {...}}; the checkpoint is damaged"));
  }
  test::write_bytes(path, "{\"schema\": \"genrepro.checkpoint/1\", \"key\": {}}\n");
  EXPECT_THAT([&] {
    try {
      CheckpointFile::open(path).read();
    } catch (const EvidenceError& err) {
      return std::string(err.what());
    }
    return std::string("(read)");
  }(), HasSubstr("line 1: a checkpoint of an older genrepro (genrepro.checkpoint/1, no line digests)"));
  test::write_bytes(path, "{\"schema\": \"genrepro.evidence/1\"}\n");
  EXPECT_THROW(CheckpointFile::open(path).read(), EvidenceError);  // not a checkpoint at all
}

TEST(Checkpoint, ARunThatIsNotValidEvidenceIsRefusedAsEvidenceIs) {
  test::ScratchDir dir("checkpoint");
  const Evidence e = two_runs();
  const std::string path = dir / "c";
  CheckpointFile f = CheckpointFile::open(path);
  f.start(checkpoint_key(header_of(e), "1/1"));
  OrderedJson bad = run_to_json(e.runs[0]);
  bad["steps"][1]["step"] = 7;  // steps out of order: the evidence reader's own rule
  f.append(bad);
  try {
    checkpoint_runs(f.read(), header_of(e), path);
    FAIL() << "a bad run was accepted";
  } catch (const EvidenceError& err) {
    EXPECT_THAT(err.what(), HasSubstr("runs[0].steps[1]"));
    EXPECT_THAT(err.what(), HasSubstr("line i+2"));
  }
}

TEST(Checkpoint, TheMismatchNamesThePartAndTheFirstField) {
  const Evidence e = two_runs();
  const OrderedJson key = checkpoint_key(header_of(e), "1/1");
  Evidence other = header_of(e);
  other.model.files["model.safetensors"].sha256 = std::string(64, 'b');
  EXPECT_THAT(checkpoint_key_mismatch(key, checkpoint_key(other, "1/1")),
              HasSubstr("a different model: model.files.model.safetensors.sha256 is \"aaaa"));
  other = header_of(e);
  other.genrepro.git_commit = "def";
  EXPECT_THAT(checkpoint_key_mismatch(key, checkpoint_key(other, "1/1")),
              HasSubstr("a different build of genrepro: genrepro.git_commit is \"abc\" in the checkpoint, \"def\" now"));
  EXPECT_THAT(checkpoint_key_mismatch(key, checkpoint_key(header_of(e), "1/2")), HasSubstr("a different --shard"));
  // Where the files are is not what they hold: a moved model directory resumes.
  other = header_of(e);
  other.model.path = "/elsewhere";
  EXPECT_EQ(checkpoint_key_mismatch(key, checkpoint_key(other, "1/1")), "");
}

TEST(Checkpoint, ASecondOpenOfTheSameFileIsRefused) {
  test::ScratchDir dir("checkpoint");
  CheckpointFile first = CheckpointFile::open(dir / "c");
  try {
    CheckpointFile::open(dir / "c");
    FAIL() << "two writers held one checkpoint";
  } catch (const Error& err) {
    EXPECT_THAT(err.what(), HasSubstr("another genrepro process is writing this checkpoint"));
  }
}

}  // namespace
}  // namespace genrepro
