// What --resume can and cannot detect in a checkpoint (docs/resume.md): one-edit mutations of a
// checkpoint holding real runs (golden/fixture/temperature.json, written by `genrepro run`), read
// as run --resume reads it (CheckpointFile::read, then checkpoint_runs against the invocation's
// header). Each edit is refused naming the line, or — a forgery that keeps every relation — kept,
// which is the documented limit.
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "evidence/checkpoint.hpp"
#include "params/experiment_file.hpp"
#include "support/env_guard.hpp"
#include "support/scratch_dir.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/errors.hpp"
#include "util/sha256.hpp"

namespace genrepro {
namespace {

using ::testing::HasSubstr;

Evidence golden_temperature() {
  std::ifstream in(std::string(GENREPRO_SOURCE_DIR) + "/golden/fixture/temperature.json");
  std::stringstream text;
  text << in.rdbuf();
  OrderedJson j = OrderedJson::parse(text.str());
  j["model"]["path"] = "/nonexistent/genrepro-checkpoint-test-model";  // the tokenizer comes from its directory
  return evidence_from_json(j, "temperature.json");
}

Evidence header_of(Evidence e) {
  e.runs.clear();
  return e;
}

// The checkpoint `run` would have written for `e`'s runs, one framed line per run.
std::string write_checkpoint(const test::ScratchDir& dir, const Evidence& e) {
  const std::string path = dir / "out.json.checkpoint";
  CheckpointFile f = CheckpointFile::open(path);
  f.start(checkpoint_key(header_of(e), "1/1"));
  for (const RunRecord& r : e.runs) f.append(run_to_json(r));
  return path;
}

// Line `n` (1-based) of the file, split off so a case can rewrite it.
struct Lines {
  std::vector<std::string> lines;
  explicit Lines(const std::string& text) {
    std::size_t at = 0;
    while (at < text.size()) {
      const std::size_t end = text.find('\n', at);
      lines.push_back(text.substr(at, end - at));
      at = end + 1;
    }
  }
  std::string text() const {
    std::string s;
    for (const std::string& l : lines) s += l + "\n";
    return s;
  }
};

// A run line's body, and the line again with its digest recomputed (what a careful forger does).
OrderedJson body_of(const std::string& line) {
  const std::size_t start = line.find("\"line\":") + 7;
  return OrderedJson::parse(line.substr(start, line.size() - start - 1));
}
std::string reframed(const OrderedJson& body) {
  const std::string b = body.dump();
  return "{\"sha256\":\"" + sha256_hex(b) + "\",\"line\":" + b + "}";
}

std::string outcome(const std::string& path, const Evidence& header) {
  try {
    const CheckpointContents c = CheckpointFile::open(path).read();
    return "kept " + std::to_string(checkpoint_runs(c, header, path).size());
  } catch (const EvidenceError& e) {
    return e.what();
  }
}

class CheckpointEdits : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tokenizer_here()) GTEST_SKIP() << "GPT-2's tokenizer files are not in " << GENREPRO_TEST_TOKENIZER_DIR;
    golden_ = golden_temperature();
    path_ = write_checkpoint(dir_, golden_);
    lines_ = Lines(test::read_bytes(path_));
  }
  static bool tokenizer_here() {
    std::ifstream f(std::string(GENREPRO_TEST_TOKENIZER_DIR) + "/encoder.json");
    return f.good();
  }
  std::string after(const std::function<void(Lines&)>& edit) {
    Lines l = lines_;
    edit(l);
    test::write_bytes(path_, l.text());
    return outcome(path_, header_of(golden_));
  }
  test::EnvGuard tokenizer_{"GENREPRO_TOKENIZER_DIR", std::string(GENREPRO_TEST_TOKENIZER_DIR)};
  test::ScratchDir dir_{"checkpoint-edits"};
  Evidence golden_;
  std::string path_;
  Lines lines_{""};
};

TEST_F(CheckpointEdits, TheUneditedCheckpointKeepsEveryRunBitForBit) {
  const CheckpointContents c = CheckpointFile::open(path_).read();
  const std::vector<RunRecord> runs = checkpoint_runs(c, header_of(golden_), path_);
  ASSERT_EQ(runs.size(), golden_.runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(run_to_json(runs[i]), run_to_json(golden_.runs[i])) << i;
  EXPECT_EQ(c.sha256, sha256_hex(test::read_bytes(path_)));
}

TEST_F(CheckpointEdits, OneByteChangedIsFoundByTheLineDigest) {
  const std::string what = after([](Lines& l) {
    std::string& line = l.lines[2];  // runs[1]
    const std::size_t at = line.find("\"output_ids\":[") + 14;
    line[at] = line[at] == '1' ? '2' : '1';
  });
  EXPECT_THAT(what, HasSubstr("out.json.checkpoint: line 3: its bytes hash to sha256 "));
  EXPECT_THAT(what, HasSubstr("the line was edited or damaged"));
}

TEST_F(CheckpointEdits, ADamagedDigestIsFound) {
  const std::string what = after([](Lines& l) { l.lines[1][12] = l.lines[1][12] == 'a' ? 'b' : 'a'; });
  EXPECT_THAT(what, HasSubstr("line 2: its bytes hash to sha256 "));
}

TEST_F(CheckpointEdits, AForgedTokenWithItsDigestRecomputedBreaksARelation) {
  // runs[1] (T = 1): step 0's token replaced by another id, the line's digest recomputed.
  const std::string what = after([](Lines& l) {
    OrderedJson run = body_of(l.lines[2]);
    run["output_ids"][0] = 11;
    run["steps"][0]["token_id"] = 11;
    l.lines[2] = reframed(run);
  });
  EXPECT_THAT(what, HasSubstr("out.json.checkpoint: runs[1].text: found "));
  EXPECT_THAT(what, HasSubstr("(runs[i] is line i+2 of the checkpoint"));
}

TEST_F(CheckpointEdits, ParamsThatAreNotTheInvocationsAreRefused) {
  const std::string what = after([](Lines& l) {
    OrderedJson run = body_of(l.lines[2]);
    run["params"]["seed"] = uint64_t(7);  // as the writer writes it: unsigned
    const RunParams p = params_from_json(nlohmann::json(run["params"]), "params");
    run["id"] = run_id(run["experiment"], run["prompt_index"], run["prompt"], p);
    l.lines[2] = reframed(run);
  });
  EXPECT_THAT(what, HasSubstr("runs[1].id: found \"temperature/p0/sample-t1-s7-"));
  EXPECT_THAT(what, HasSubstr("(the run is not a point of its experiment's grid)"));
}

// The limit docs/resume.md states: a sampled token replaced by another listed candidate, with that
// candidate's probabilities and text, the texts decoded again and the digest recomputed, obeys
// every relation; only running the model again tells it from a real run.
TEST_F(CheckpointEdits, AForgeryThatKeepsEveryRelationIsKept) {
  const Gpt2Tokenizer t = Gpt2Tokenizer::from_directory(GENREPRO_TEST_TOKENIZER_DIR);
  const std::string what = after([&](Lines& l) {
    OrderedJson run = body_of(l.lines[2]);  // runs[1]: T = 1, no filter
    OrderedJson& s = run["steps"][49];
    OrderedJson c = s["top"][1];
    if (c["id"] == s["token_id"]) c = s["top"][2];
    s["token_id"] = c["id"];
    s["token_text"] = c["text"];
    s["prob"] = c["prob"];
    s["prob_t1"] = c["prob_scaled"];
    run["output_ids"][49] = c["id"];
    std::vector<int64_t> ids = run["prompt_ids"].get<std::vector<int64_t>>();
    const std::vector<int64_t> out = run["output_ids"].get<std::vector<int64_t>>();
    run["continuation"] = t.decode_for_display(out);
    ids.insert(ids.end(), out.begin(), out.end());
    run["text"] = t.decode_for_display(ids);
    l.lines[2] = reframed(run);
  });
  EXPECT_EQ(what, "kept 3");
}

TEST(CheckpointFileOpen, AnEmptyCheckpointIsToldFromAMissingOne) {
  test::ScratchDir dir("checkpoint-empty");
  {
    const CheckpointFile missing = CheckpointFile::open(dir / "a.checkpoint");
    EXPECT_FALSE(missing.existed());
  }
  test::write_bytes(dir / "b.checkpoint", "");
  const CheckpointFile empty = CheckpointFile::open(dir / "b.checkpoint");
  EXPECT_TRUE(empty.existed());
  EXPECT_TRUE(empty.read().empty);
}

}  // namespace
}  // namespace genrepro
