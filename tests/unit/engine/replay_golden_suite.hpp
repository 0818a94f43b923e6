#pragma once
// A golden evidence file made once per test suite, by the runner (the loop) from one experiment on
// the tiny fixture, for the replay suites (replay_test.cpp, replay_framework_test.cpp). `Experiment`
// gives the suite's name and its experiment file's text: static constexpr const char* kName and
// kExperiment. Each suite type has its own directory and golden.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/replay.hpp"
#include "engine/runner.hpp"
#include "evidence/evidence.hpp"

namespace genrepro::test {

template <class Experiment>
class ReplayGoldenSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    namespace fs = std::filesystem;
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("genrepro_" + std::string(Experiment::kName) + "_test_" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    const std::string experiment = (*dir_ / (std::string(Experiment::kName) + ".json")).string();
    std::ofstream(experiment) << Experiment::kExperiment;
    RunnerOptions o;
    o.experiments = load_experiments({experiment});
    o.model = model();
    golden_path_ = new std::string((*dir_ / "golden.json").string());
    write_evidence(*golden_path_, run_experiments(o));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete golden_path_;
    dir_ = nullptr;
    golden_path_ = nullptr;
  }
  static ModelFiles model() { return locate_model_dir(GENREPRO_TEST_MODEL_DIR, ModelSource::flag); }
  static std::vector<EvidenceFile> golden() { return read_golden(*golden_path_); }
  static ReplayOptions options() {
    ReplayOptions o;
    o.model = model();
    return o;
  }
  // Index of the first golden run whose params satisfy `pick`.
  static size_t run_where(const Evidence& e, const std::function<bool(const RunParams&)>& pick) {
    for (size_t i = 0; i < e.runs.size(); ++i)
      if (pick(e.runs[i].params)) return i;
    ADD_FAILURE() << "no golden run matches";
    return 0;
  }

  static inline std::filesystem::path* dir_ = nullptr;
  static inline std::string* golden_path_ = nullptr;
};

}  // namespace genrepro::test
