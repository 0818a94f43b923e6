#pragma once
// A diff as CI systems read it: JUnit XML (one test case per run; Jenkins, GitLab, GitHub's test
// reporters, Buildkite and Azure all read this shape) and GitHub Actions workflow commands
// (`::error` / `::warning` lines that become annotations). Token steps are shown as people count
// them: "new token N" is steps[N - 1] (docs/diff.md).
#include <map>
#include <string>

#include "compare/evidence_diff.hpp"

namespace genrepro {

// What diff --sensitivity said about the runs whose tokens diverged (compare/fragility.hpp):
// each such run's label and reason, appended to its message; `excused` (--allow-fragile passed
// the gate) makes those runs JUnit skips and annotation warnings instead of failures and errors.
struct CiFragility {
  std::map<std::string, std::string> label_of_run;  // id -> "known-fragile (logit margin ...)"
  bool excused = false;
};

// <testsuites> with one <testsuite name="genrepro diff"> holding a <testcase> per compared run
// (classname = the run's experiment), a failing one for each differing run (its message: the
// verdict, the first divergence, both tokens with their probabilities), and a failing one for
// each missing or extra run. Environment differences go to <system-out>: they never fail.
std::string diff_to_junit(const EvidenceDiff& diff, const CiFragility& fragility = {});

// One `::error` line per differing, missing or extra run, and one `::warning` line listing the
// environment differences (likely causes); nothing when everything agrees.
std::string diff_to_github_annotations(const EvidenceDiff& diff, const CiFragility& fragility = {});

// The one-line explanation of a differing run that both formats carry, e.g.
// "regression at new token 6 (steps[5]): golden token 30 \" t30\" (p 0.7), new token 31 \" t31\" (p 0.2)".
std::string run_difference_line(const RunDiff& run);
// The same for a pair of runs across a parameter change: both ids, "parameter change: top_p 0.9 →
// 0.95", where the tokens part. JUnit makes each pair one failing test case (type "paired").
std::string pair_difference_line(const PairedRun& pair);

}  // namespace genrepro
