// Sampling parameters at float32's edges (docs/sampling.md, "Float32 edges"): a temperature is 0
// or in [1e-30, 1e+30], so the smallest normal and subnormal floats and the largest finite ones
// are refused with the same words wherever they come from; top_p is valid all the way to its ends.
#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "params/sampling_params.hpp"
#include "util/errors.hpp"

namespace genrepro {
namespace {

std::vector<ParamProblem> with_temperature(double t) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.temperature = t;
  return check_run_params(p);
}

std::vector<ParamProblem> with_top_p(double top_p) {
  RunParams p;
  p.sampling.mode = DecodeMode::sample;
  p.sampling.top_p = top_p;
  return check_run_params(p);
}

TEST(Float32Edges, TemperaturesOutsideFloat32sRangeAreRefused) {
  const double refused[] = {FLT_MIN,                                      // smallest normal float32, 1.2e-38
                            std::numeric_limits<float>::denorm_min(),     // smallest subnormal float32, 1.4e-45
                            std::numeric_limits<double>::denorm_min(),    // 4.9e-324: 0 in float32
                            std::nextafter(kMinTemperature, 0.0),         // just below the minimum
                            FLT_MAX,                                      // largest finite float32
                            DBL_MAX,                                      // not a float32 at all
                            std::nextafter(kMaxTemperature, HUGE_VAL),    // just above the maximum
                            HUGE_VAL, -0.5, std::nan("")};
  for (double t : refused) {
    SCOPED_TRACE(t);
    const auto problems = with_temperature(t);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].field, "temperature");
    EXPECT_EQ(problems[0].allowed, temperature_allowed());
  }
  EXPECT_EQ(describe_problem(with_temperature(1e-38)[0], "--temperature"),
            "--temperature = 1e-38 is not allowed; allowed: 0 (greedy) or a number from 1e-30 to 1e+30 (beyond them "
            "logits / T leaves float32's range)");
}

TEST(Float32Edges, TheBoundsThemselvesAndZeroAreAllowed) {
  for (double t : {0.0, kMinTemperature, 1e-3, 1.0, 2.0, kMaxTemperature}) {
    SCOPED_TRACE(t);
    EXPECT_TRUE(with_temperature(t).empty());
  }
}

TEST(Float32Edges, TopPIsValidUpToItsEnds) {
  for (double p : {std::numeric_limits<double>::denorm_min(), static_cast<double>(std::numeric_limits<float>::denorm_min()),
                   static_cast<double>(FLT_MIN), 1e-9, std::nextafter(1.0, 0.0), 1.0}) {
    SCOPED_TRACE(p);
    EXPECT_TRUE(with_top_p(p).empty());
  }
  for (double p : {0.0, -0.0, std::nextafter(1.0, 2.0), std::nan(""), HUGE_VAL}) {
    SCOPED_TRACE(p);
    ASSERT_EQ(with_top_p(p).size(), 1u);
    EXPECT_EQ(with_top_p(p)[0].field, "top_p");
  }
}

// Experiment files get the same rule through the same function.
TEST(Float32Edges, ExperimentFilesRefuseTheSameTemperatures) {
  try {
    parse_experiment(R"({"name": "x", "prompts": ["a"], "runs": [{"mode": "sample", "temperature": 1e-38}]})", "x.json");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()),
              "x.json: runs[0].temperature = 1e-38 is not allowed; allowed: 0 (greedy) or a number from 1e-30 to 1e+30 "
              "(beyond them logits / T leaves float32's range)");
  }
}

}  // namespace
}  // namespace genrepro
