#include "cli/request_checks.hpp"

#include "cli/flag_kinds.hpp"

namespace genrepro::cli {

void check_request(const GenerateRequest& r) { checked_threads("--threads", r.threads); }

void check_request(const RunRequest& r) {
  checked_threads("--threads", r.threads);
  checked_tolerance("--prob-tolerance", r.prob_tolerance);
  if (r.check_equivalence) return;  // writes no evidence
  std::vector<std::string> inputs;
  for (const ExperimentSpec& spec : r.experiments) inputs.push_back(spec.path);
  check_output_file("--out", r.out, inputs);
}

void check_request(const ReplayRequest& r) {
  checked_threads("--threads", r.threads);
  checked_tolerance("--logprob-tolerance", r.logprob_tolerance);
}

int CheckedEngine::generate(const GenerateRequest& request, Console& io) {
  check_request(request);
  return inner_.generate(request, io);
}

int CheckedEngine::run(const RunRequest& request, Console& io) {
  check_request(request);
  return inner_.run(request, io);
}

int CheckedEngine::replay(const ReplayRequest& request, Console& io) {
  check_request(request);
  return inner_.replay(request, io);
}

}  // namespace genrepro::cli
