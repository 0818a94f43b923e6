#pragma once
// The last check of a typed request before it crosses into the engine (and libtorch): every
// flag-kind value (flag_kinds.hpp) and output path, so that no request reaches the model with a
// value that would be refused after the work. run_cli wraps the engine in CheckedEngine, so this
// holds for every verb that runs the model, whichever file built the request.
#include "cli/verbs.hpp"

namespace genrepro::cli {

void check_request(const GenerateRequest& r);  // --threads
void check_request(const RunRequest& r);       // --threads, --prob-tolerance, --out (not a directory, not an input)
void check_request(const ReplayRequest& r);    // --threads, --logprob-tolerance

// EngineVerbs that checks each request first, then hands it to `inner`.
class CheckedEngine : public EngineVerbs {
 public:
  explicit CheckedEngine(EngineVerbs& inner) : inner_(inner) {}
  int generate(const GenerateRequest& request, Console& io) override;
  int run(const RunRequest& request, Console& io) override;
  int replay(const ReplayRequest& request, Console& io) override;
  int env(const EnvRequest& r, Console& io) override { return inner_.env(r, io); }

 private:
  EngineVerbs& inner_;
};

}  // namespace genrepro::cli
