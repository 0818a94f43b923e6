// evidence.json: doubles round-trip bit-exactly (including the awkward ones: subnormals, -0,
// the largest double, non-finite values); text -> Evidence -> text is a fixed point, for
// evidence and for a golden (no volatile fields); strip_volatile removes exactly the volatile
// fields. What reading refuses, and how it says so, is evidence_read_test.cpp's.
#include "evidence/evidence.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "evidence_builders.hpp"
#include "util/errors.hpp"
#include "util/json_text.hpp"

namespace genrepro {
namespace {

using nlohmann::json;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

// A run of one step listing every value of `reals` as a candidate, and a first-prediction run
// (max_new_tokens 0: one step, token_id null, no output ids).
Evidence sample_evidence(const std::vector<double>& reals) {
  Evidence e;
  e.genrepro = {"0.1.0", "abc123"};
  e.created_utc = "2026-01-01T00:00:00Z";
  e.environment.libtorch_version = "1.13.1";
  e.environment.blas.library = "/usr/lib/libblas.so.3";
  e.environment.blas.vendor = "openblas";
  e.environment.blas.loaded = {"/usr/lib/libopenblas.so.0"};
  e.environment.threads = {1, 1, 1, 2};
  // Not in alphabetical order: reading must keep the writer's order.
  e.environment.numerics_env = {{"OMP_NUM_THREADS", std::nullopt}, {"OPENBLAS_CORETYPE", "Haswell"}, {"ATEN_CPU_CAPABILITY", std::nullopt}};
  e.environment.float_control = FloatControl{false, false, "nearest"};
  e.model.source = "fixture";
  e.model.path = "/m";
  e.model.config = {{"n_positions", 64}, {"vocab_size", 50257}};
  e.model.eos_token_id = 50256;
  e.model.n_positions = 64;
  e.model.files["model.safetensors"] = {std::string(64, 'a'), 123};
  e.experiments.push_back({"x", "experiments/x.json", std::string(64, 'b'), json{{"name", "x"}}});
  RunRecord r;
  r.id = "x/p0/sample-01234567";
  r.experiment = "x";
  r.prompt = "the river bank was";
  r.params.sampling.mode = DecodeMode::sample;
  r.params.sampling.seed = std::numeric_limits<uint64_t>::max();
  r.params.max_new_tokens = 1;
  r.params.top_candidates = static_cast<int64_t>(reals.size());
  r.result.prompt_ids = {1169, 7850, 3331, 373};
  r.result.output_ids = {257};
  r.result.stop_reason = StopReason::max_new_tokens;
  r.result.stop_step = 1;
  r.result.seconds = 0.25;
  r.text = "the river bank was a";
  r.continuation = " a";
  StepRecord s;
  s.token_id = 257;
  s.token_text = " a";
  s.prob = reals.front();
  s.kept = 1;
  for (size_t i = 0; i < reals.size(); ++i) s.top.push_back({static_cast<int64_t>(i), " a", reals[i], reals[reals.size() - 1 - i]});
  r.result.steps.push_back(s);
  e.runs.push_back(r);

  RunRecord first = r;
  first.id = "x/p0/first-prediction";
  first.index = 1;
  first.params.max_new_tokens = 0;
  first.params.top_candidates = 0;
  first.result.output_ids = {};
  first.result.stop_reason = StopReason::max_new_tokens;
  first.result.stop_step = 0;
  first.result.steps = {StepRecord{}};  // token_id null
  first.result.steps[0].kept = 1;
  first.text = r.prompt;
  first.continuation = "";
  e.runs.push_back(first);
  return e;
}

// sample_evidence as the writer would make it, for what goes through the reader (its consistency
// layer): `probs` (descending) as both prob and prob_scaled, rest_mass and margin derived from
// them, every positive candidate kept, the chosen token's entries its own, ids and specs
// test::make_consistent's.
Evidence consistent_sample(const std::vector<double>& probs) {
  Evidence e = sample_evidence(probs);
  StepRecord& s = e.runs[0].result.steps[0];
  double listed = 0;
  int64_t positive = 0;
  for (Candidate& c : s.top) {
    c.prob_scaled = c.prob;
    listed += c.prob_scaled;
    positive += c.prob > 0 ? 1 : 0;
  }
  s.rest_mass = 1 - listed;
  s.margin = s.top.size() >= 2 ? s.top[0].prob_scaled - s.top[1].prob_scaled : 0;
  s.kept = std::max<int64_t>(positive, 1);
  if (s.top.size() > 257) s.prob = s.prob_t1 = s.top[257].prob;
  e.runs[1].experiment = "x-first";  // its own spec: it lists no candidates
  test::make_consistent(e);
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
  // Every double, finite or not, through the writer's text and the one rule for reals
  // (real_from_json, what the reader's structure stage applies).
  const ParsedJson<OrderedJson> any = parse_ordered_json_text(evidence_text(sample_evidence(reals)));
  ASSERT_TRUE(any.ok()) << any.problem;
  const OrderedJson& top_json = any.value["runs"][0]["steps"][0]["top"];
  ASSERT_EQ(top_json.size(), reals.size());
  for (size_t i = 0; i < reals.size(); ++i) {
    const double got = real_from_json(top_json[i]["prob"]).value();
    if (std::isnan(reals[i])) {
      EXPECT_TRUE(std::isnan(got)) << "candidate " << i;
    } else {
      ASSERT_TRUE(same_bits(got, reals[i])) << "candidate " << i << ": wrote " << reals[i] << ", read " << got;
    }
  }
  // The whole reader on the ones that are probabilities (its meaning stage refuses the others,
  // docs/validation.md): every bit kept, and text -> Evidence -> text a fixed point.
  std::vector<double> probabilities;
  for (double d : reals)
    if (d >= 0 && d <= 1) probabilities.push_back(std::ldexp(d, -13));  // their sum stays below 1
  // Listed best first, as the writer lists candidates.
  std::sort(probabilities.begin(), probabilities.end(), [](double a, double b) { return a > b; });
  ASSERT_GT(probabilities.size(), 1000u);
  const std::string text = evidence_text(consistent_sample(probabilities));
  const ParsedJson<OrderedJson> parsed = parse_ordered_json_text(text);
  ASSERT_TRUE(parsed.ok()) << parsed.problem;
  const Evidence back = evidence_from_json(parsed.value, "mem");
  ASSERT_EQ(back.runs.size(), 2u);
  const std::vector<Candidate>& top = back.runs[0].result.steps.at(0).top;
  ASSERT_EQ(top.size(), probabilities.size());
  for (size_t i = 0; i < probabilities.size(); ++i)
    ASSERT_TRUE(same_bits(top[i].prob, probabilities[i])) << "candidate " << i;
  EXPECT_FALSE(back.runs[1].result.steps.at(0).token_id.has_value());
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

TEST(Evidence, WriteAndReadAFile) {
  const auto path = std::filesystem::temp_directory_path() / ("genrepro_evidence_test_" + std::to_string(::getpid()) + ".json");
  const Evidence e = consistent_sample({0.25, 0.125});
  write_evidence(path.string(), e);
  const Evidence back = read_evidence(path.string());
  EXPECT_EQ(evidence_text(back), evidence_text(e));
  std::filesystem::remove(path);
}

// A golden (bless strips the volatile fields) reads back without them and writes back the same
// bytes: nothing is invented for what the file does not hold.
TEST(Evidence, AGoldenIsAFixedPointToo) {
  const OrderedJson golden = strip_volatile(evidence_to_json(consistent_sample({0.25, 0.125})));
  const std::string text = golden.dump(2) + "\n";
  const ParsedJson<OrderedJson> parsed = parse_ordered_json_text(text);
  ASSERT_TRUE(parsed.ok()) << parsed.problem;
  const Evidence back = evidence_from_json(parsed.value, "golden.json");
  EXPECT_FALSE(back.created_utc.has_value());
  EXPECT_FALSE(back.environment.threads.runs_concurrently.has_value());
  EXPECT_FALSE(back.runs[0].result.seconds.has_value());
  EXPECT_EQ(evidence_text(back), text);
}

TEST(Evidence, RealsAreWrittenAndReadByOneRule) {
  EXPECT_EQ(real_to_json(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(real_to_json(std::numeric_limits<double>::infinity()), "Infinity");
  EXPECT_EQ(real_to_json(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(real_to_json(0.5), 0.5);
  EXPECT_TRUE(std::isnan(*real_from_json("NaN")));
  EXPECT_EQ(*real_from_json("Infinity"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(*real_from_json("-Infinity"), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(*real_from_json(3), 3.0);
  for (const OrderedJson& other : {OrderedJson("nan"), OrderedJson("inf"), OrderedJson(nullptr), OrderedJson("0.5"), OrderedJson::array()})
    EXPECT_FALSE(real_from_json(other).has_value()) << other.dump();
}

TEST(Evidence, StripVolatileRemovesExactlyTheVolatileFields) {
  const json j = json::parse(evidence_text(sample_evidence({0.5})));
  ASSERT_TRUE(j.contains("created_utc") && j["runs"][0].contains("timing") && j["environment"]["threads"].contains("runs_concurrently"));
  const json s = strip_volatile(j);
  EXPECT_FALSE(s.contains("created_utc"));
  EXPECT_FALSE(s["runs"][0].contains("timing"));
  EXPECT_FALSE(s["environment"]["threads"].contains("runs_concurrently"));
  // Everything else is kept: put the removed fields back and the documents are equal.
  json restored = s;
  restored["created_utc"] = j["created_utc"];
  for (size_t i = 0; i < j["runs"].size(); ++i) restored["runs"][i]["timing"] = j["runs"][i]["timing"];
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
