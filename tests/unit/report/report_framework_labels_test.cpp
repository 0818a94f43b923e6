// The report's run labels and groupings know the frameworks: a llama.cpp or Hugging
// Face run is named by its framework and the controls it turns on, and never shares a group (the
// "Sampler order" section's "differing only in order", a step chart's series) with an article run
// of the same article keys.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "report/report_section_kit.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro::sections {
namespace {

using test::greedy_steps;
using test::make_run;

TEST(ReportFrameworkLabels, AFrameworkRunIsNamedAndGroupedApart) {
  const RunRecord article = make_run("a", DecodeMode::greedy, greedy_steps());
  RunRecord hf = make_run("h", DecodeMode::greedy, greedy_steps());
  hf.params.sampling.framework = Framework::hf;
  hf.params.sampling.controls.repetition_penalty = 1.3;
  RunRecord hf_plain = hf;
  hf_plain.id = "h0";
  hf_plain.params.sampling.controls.repetition_penalty = 1;

  EXPECT_EQ(run_label(article), "greedy");
  EXPECT_EQ(run_label(hf), "hf greedy repetition_penalty=1.3");
  EXPECT_EQ(run_label(hf_plain), "hf greedy");

  const std::vector<Runs> groups = group_by({&article, &hf, &hf_plain}, kKeepAll);
  ASSERT_EQ(groups.size(), 3u);
  // The article's own runs still group as before: the same keys, one group.
  const RunRecord again = make_run("a2", DecodeMode::greedy, greedy_steps());
  EXPECT_EQ(group_by({&article, &again}, kKeepAll).size(), 1u);
}

}  // namespace
}  // namespace genrepro::sections
