#pragma once
// The CLI in-process with captured streams, against a stand-in engine: any EngineVerbs (one that
// records the requests it gets), or NoEngine, which must never be reached (for the refusals a verb
// makes before any model runs: a verb that reached it exits 99, which no test expects).
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_cli.hpp"
#include "cli/verbs.hpp"

namespace genrepro::cli::test_support {

class NoEngine final : public EngineVerbs {
 public:
  int generate(const GenerateRequest&, Console&) override { return 99; }
  int run(const RunRequest&, Console&) override { return 99; }
  int replay(const ReplayRequest&, Console&) override { return 99; }
  int env(const EnvRequest&, Console&) override { return 99; }
};

// Keeps every request that reaches the engine, and succeeds.
class RecordingEngine final : public EngineVerbs {
 public:
  int generate(const GenerateRequest& r, Console&) override {
    generated.push_back(r);
    return kExitOk;
  }
  int run(const RunRequest& r, Console&) override {
    ran.push_back(r);
    return kExitOk;
  }
  int replay(const ReplayRequest& r, Console&) override {
    replayed.push_back(r);
    return kExitOk;
  }
  int env(const EnvRequest&, Console&) override { return kExitOk; }
  std::vector<GenerateRequest> generated;
  std::vector<RunRequest> ran;
  std::vector<ReplayRequest> replayed;
};

struct VerbResult {
  int exit = -1;
  std::string out, err;
};

inline VerbResult run_verb(const std::vector<std::string>& args, EngineVerbs& engine) {
  std::istringstream in;
  std::ostringstream so, se;
  Console io{in, so, se};
  VerbResult r;
  r.exit = run_cli(args, io, engine);
  r.out = so.str();
  r.err = se.str();
  return r;
}

inline VerbResult run_without_engine(const std::vector<std::string>& args) {
  NoEngine engine;
  return run_verb(args, engine);
}

}  // namespace genrepro::cli::test_support
