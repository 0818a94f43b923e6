// evidence.json: doubles round-trip bit-exactly (including the awkward ones: subnormals, -0,
// the largest double, non-finite values); text -> Evidence -> text is a fixed point; reading
// names the file and JSON path of a problem; strip_volatile removes exactly the volatile fields.
#include "evidence/evidence.hpp"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro {
namespace {

using nlohmann::json;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

Evidence sample_evidence(const std::vector<double>& reals) {
  Evidence e;
  e.genrepro = {"0.1.0", "abc123"};
  e.created_utc = "2026-01-01T00:00:00Z";
  e.environment.libtorch_version = "1.13.1";
  e.environment.blas.library = "/usr/lib/libblas.so.3";
  e.environment.blas.vendor = "openblas";
  e.environment.blas.loaded = {"/usr/lib/libopenblas.so.0"};
  e.environment.threads = {1, 1, 1, 2};
  e.environment.numerics_env = {{"OMP_NUM_THREADS", std::nullopt}, {"OPENBLAS_CORETYPE", "Haswell"}};
  e.environment.float_control = FloatControl{false, false, "nearest"};
  e.model.source = "fixture";
  e.model.path = "/m";
  e.model.config = {{"n_positions", 64}};
  e.model.eos_token_id = 50256;
  e.model.n_positions = 64;
  e.model.files["model.safetensors"] = {std::string(64, 'a'), 123};
  e.experiments.push_back({"x", "experiments/x.json", std::string(64, 'b'), json{{"name", "x"}}});
  RunRecord r;
  r.id = "x/p0/greedy-01234567";
  r.experiment = "x";
  r.prompt = "the river bank was";
  r.params.sampling.mode = DecodeMode::sample;
  r.params.sampling.seed = std::numeric_limits<uint64_t>::max();
  r.result.prompt_ids = {1169, 7850, 3331, 373};
  r.result.output_ids = {257};
  r.result.stop_reason = StopReason::eos;
  r.result.stop_step = 1;
  r.result.seconds = 0.25;
  r.text = "the river bank was a";
  r.continuation = " a";
  for (size_t i = 0; i < reals.size(); ++i) {
    StepRecord s;
    s.step = static_cast<int64_t>(i);
    s.token_id = 257;
    s.token_text = " a";
    s.prob = reals[i];
    s.top.push_back({257, " a", reals[i], reals[reals.size() - 1 - i]});
    r.result.steps.push_back(s);
  }
  StepRecord first_prediction;  // max_new_tokens == 0 records token_id null
  r.result.steps.push_back(first_prediction);
  e.runs.push_back(r);
  return e;
}

TEST(Evidence, DoublesRoundTripBitExactly) {
  std::vector<double> reals = {0.1,
                               1.0 / 3.0,
                               std::numeric_limits<double>::denorm_min(),
                               std::numeric_limits<double>::min(),
                               std::numeric_limits<double>::max(),
                               -0.0,
                               std::nextafter(1.0, 2.0),
                               std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity(),
                               -std::numeric_limits<double>::infinity()};
  // Random bit patterns cover exponents and mantissas no hand-picked list does.
  std::mt19937_64 bits(20260101);
  constexpr int kRandomDoubles = 5000;
  while (reals.size() < kRandomDoubles) {
    const uint64_t b = bits();
    double d;
    std::memcpy(&d, &b, sizeof d);
    if (std::isfinite(d)) reals.push_back(d);
  }
  const Evidence original = sample_evidence(reals);
  const std::string text = evidence_text(original);
  const JsonParseOutcome parsed = parse_json_text(text);
  ASSERT_TRUE(parsed.ok()) << parsed.problem;
  const Evidence back = evidence_from_json(parsed.value, "mem");
  ASSERT_EQ(back.runs.size(), 1u);
  ASSERT_EQ(back.runs[0].result.steps.size(), reals.size() + 1);
  for (size_t i = 0; i < reals.size(); ++i) {
    const double got = back.runs[0].result.steps[i].prob;
    if (std::isnan(reals[i])) {
      EXPECT_TRUE(std::isnan(got)) << "step " << i;
    } else {
      ASSERT_TRUE(same_bits(got, reals[i])) << "step " << i << ": wrote " << reals[i] << ", read " << got;
    }
  }
  EXPECT_FALSE(back.runs[0].result.steps.back().token_id.has_value());
  EXPECT_EQ(back.runs[0].params.sampling.seed, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(evidence_text(back), text) << "text -> Evidence -> text must be a fixed point";
}

TEST(Evidence, KeysAreWrittenInTheDocumentedOrder) {
  const std::string text = evidence_text(sample_evidence({std::numeric_limits<double>::quiet_NaN()}));
  const std::vector<std::string> keys = {"\"schema\"", "\"genrepro\"", "\"created_utc\"", "\"environment\"",
                                         "\"model\"", "\"experiments\"", "\"runs\""};
  size_t last = 0;
  for (const auto& k : keys) {
    const size_t at = text.find(k);
    ASSERT_NE(at, std::string::npos) << k;
    EXPECT_GT(at, last) << k;
    last = at;
  }
  EXPECT_EQ(text.rfind("{\n  \"schema\": \"genrepro.evidence/1\",", 0), 0u);
  EXPECT_NE(text.find("\"prob\": \"NaN\""), std::string::npos) << "non-finite values need a spelling";
}

TEST(Evidence, ReadingNamesFileAndPath) {
  json j = json::parse(evidence_text(sample_evidence({0.5})));
  const auto error_of = [](const json& doc) {
    try {
      evidence_from_json(doc, "reports/e.json");
    } catch (const EvidenceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  json bad = j;
  bad["runs"][0]["steps"][0]["prob"] = "high";
  EXPECT_EQ(error_of(bad), "reports/e.json: runs[0].steps[0].prob: expected a number (or \"NaN\", \"Infinity\", "
                           "\"-Infinity\"), found \"high\"");
  bad = j;
  bad["runs"][0].erase("output_ids");
  EXPECT_EQ(error_of(bad), "reports/e.json: runs[0].output_ids: missing; is this a genrepro evidence file of version "
                           "genrepro.evidence/1?");
  bad = j;
  bad["schema"] = "genrepro.evidence/0";
  EXPECT_EQ(error_of(bad), "reports/e.json: schema: \"genrepro.evidence/0\" is not genrepro.evidence/1; this "
                           "genrepro reads only that version");
  bad = j;
  bad["runs"][0]["params"]["top_k"] = "all";
  EXPECT_EQ(error_of(bad), "reports/e.json: runs[0].params.top_k = \"all\" is not allowed; allowed: an integer");
  bad = j;
  bad["runs"][0]["stop"]["reason"] = "tired";
  EXPECT_EQ(error_of(bad), "reports/e.json: runs[0].stop.reason: \"tired\" is not a stop reason; expected eos, "
                           "max_new_tokens or context_full");
}

TEST(Evidence, WriteAndReadAFile) {
  const auto path = std::filesystem::temp_directory_path() / ("genrepro_evidence_test_" + std::to_string(::getpid()) + ".json");
  const Evidence e = sample_evidence({0.25, 0.125});
  write_evidence(path.string(), e);
  const Evidence back = read_evidence(path.string());
  EXPECT_EQ(evidence_text(back), evidence_text(e));
  std::ofstream(path) << "{\"schema\": ";
  try {
    read_evidence(path.string());
    FAIL();
  } catch (const EvidenceError& err) {
    EXPECT_EQ(std::string(err.what()).rfind(path.string() + ": invalid JSON: parse error at line 1, column 12", 0), 0u)
        << err.what();
  }
  std::filesystem::remove(path);
}

TEST(Evidence, StripVolatileRemovesExactlyTheVolatileFields) {
  const json j = json::parse(evidence_text(sample_evidence({0.5})));
  const json s = strip_volatile(j);
  EXPECT_FALSE(s.contains("created_utc"));
  EXPECT_FALSE(s["runs"][0].contains("timing"));
  EXPECT_FALSE(s["environment"]["threads"].contains("runs_concurrently"));
  // Everything else is kept: put the removed fields back and the documents are equal.
  json restored = s;
  restored["created_utc"] = j["created_utc"];
  restored["runs"][0]["timing"] = j["runs"][0]["timing"];
  restored["environment"]["threads"]["runs_concurrently"] = j["environment"]["threads"]["runs_concurrently"];
  EXPECT_EQ(restored, j);
}

TEST(Evidence, UtcTimestampShape) {
  const std::string t = utc_timestamp_now();
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(t[4], '-');
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t[19], 'Z');
}

}  // namespace
}  // namespace genrepro
