// "replicas": N (the classic nondeterminism experiment): an entry's runs repeated identically. Copy 0 is
// the run itself (its id unchanged); copies 1..N-1 differ only in params.replica, which their ids
// hash. The ids below were computed with Python from the documented formula (docs/experiments.md,
// "Run ids"), not by run_id.
#include <string>

#include <gtest/gtest.h>

#include "params/experiment_spec.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

constexpr const char* kPath = "experiments/identical.json";

std::string file_with(const std::string& entry) {
  return R"({"name": "identical", "prompts": ["the river bank was"], "use_cache": true, "runs": [)" + entry + "]}";
}

std::string error_of(const std::string& text) {
  try {
    parse_experiment(text, kPath);
  } catch (const SpecError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a SpecError for: " << text;
  return {};
}

TEST(Replicas, CopiesAreIdenticalButForTheirNumberAndCopyZeroIsTheRunItself) {
  const ExperimentSpec plain = parse_experiment(file_with(R"({"mode": "greedy"})"), kPath);
  const ExperimentSpec s = parse_experiment(file_with(R"({"mode": "greedy", "replicas": 4})"), kPath);
  ASSERT_EQ(plain.runs.size(), 1u);
  ASSERT_EQ(s.runs.size(), 4u);
  // Python: hashlib.sha256(json.dumps({"params": p, "prompt": "the river bank was"}, sort_keys=True,
  // separators=(",", ":")).encode()).hexdigest()[:8], p the 12 default keys with use_cache true.
  EXPECT_EQ(plain.runs[0].id, "identical/p0/greedy-e164556b");
  EXPECT_EQ(s.runs[0].id, plain.runs[0].id);
  // The same p with "replica": 3 added.
  EXPECT_EQ(s.runs[3].id, "identical/p0/greedy-r3-e875add4");
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(s.runs[k].params.replica, k);
    RunParams same = s.runs[k].params;
    same.replica = 0;
    EXPECT_EQ(params_to_json(same), params_to_json(s.runs[0].params)) << "copy " << k << " differs beyond its number";
  }
  EXPECT_FALSE(params_to_json(s.runs[0].params).contains("replica"));
  EXPECT_EQ(params_to_json(s.runs[2].params)["replica"], 2);
}

TEST(Replicas, CopiesAreTheInnermostAxisOfTheGrid) {
  const ExperimentSpec s =
      parse_experiment(file_with(R"({"mode": "sample", "seed": [1, 2], "replicas": 3})"), kPath);
  ASSERT_EQ(s.runs.size(), 6u);
  const uint64_t seeds[] = {1, 1, 1, 2, 2, 2};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(s.runs[i].params.sampling.seed, seeds[i]);
    EXPECT_EQ(s.runs[i].params.replica, int64_t(i % 3));
  }
}

TEST(Replicas, EvidenceParamsRoundTripAndACopyZeroIsNeverWritten) {
  const ExperimentSpec s = parse_experiment(file_with(R"({"mode": "greedy", "replicas": 2})"), kPath);
  const RunParams back = params_from_json(nlohmann::json(params_to_json(s.runs[1].params)), "runs[1].params");
  EXPECT_EQ(back.replica, 1);
  EXPECT_EQ(run_id("identical", 0, "the river bank was", back), s.runs[1].id);
  nlohmann::json zero = nlohmann::json(params_to_json(s.runs[1].params));
  zero["replica"] = 0;
  try {
    params_from_json(zero, "runs[1].params");
    ADD_FAILURE() << "replica 0 was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("runs[1].params.replica = 0 is not allowed; allowed: an integer from 1 to 9999"),
              std::string::npos)
        << e.what();
  }
}

TEST(Replicas, BadValuesNameThePathTheValueAndWhatIsAllowed) {
  const std::string allowed = "allowed: an integer from 1 to 10000 (identical copies of each run of the entry; not a list)";
  for (const char* bad : {"0", "-1", "10001", "2.5", "\"4\"", "[2, 3]", "true"}) {
    const std::string msg = error_of(file_with(std::string(R"({"mode": "greedy", "replicas": )") + bad + "}"));
    EXPECT_NE(msg.find("experiments/identical.json: runs[0].replicas"), std::string::npos) << msg;
    EXPECT_NE(msg.find(allowed), std::string::npos) << msg;
  }
  const std::string top = error_of(R"({"name": "x", "prompts": ["a"], "replicas": 2, "runs": [{"mode": "greedy"}]})");
  EXPECT_NE(top.find("replicas: unknown key; replicas belongs in each entry of runs"), std::string::npos) << top;
}

TEST(Replicas, TheyCountAgainstTheRunBudget) {
  const std::string msg = [] {
    try {
      parse_experiment(file_with(R"({"mode": "greedy", "replicas": 10000})"), kPath, RunBudget{5000, 0});
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(msg.find("expands to 10000 runs"), std::string::npos) << msg;
}

}  // namespace
}  // namespace genrepro
