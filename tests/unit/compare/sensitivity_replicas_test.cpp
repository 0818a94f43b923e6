// The classic nondeterminism experiment and the cache axis on hand-made cells: copies of one run whose
// completions are planted (so the distinct counts are known on paper), and a KV-cache cell whose
// run ids differ from the reference's only by use_cache.
#include "compare/sensitivity.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "params/experiment_file.hpp"
#include "unit/evidence/evidence_builders.hpp"

namespace genrepro {
namespace {

using test::greedy_steps;
using test::make_evidence;
using test::make_run;
using test::make_step;

// Copy k of the greedy run, its id as the spec gives it; `flip` changes its last token.
RunRecord copy(int64_t k, bool flip = false, bool use_cache = false) {
  std::vector<StepRecord> steps = greedy_steps();
  if (flip) steps[2] = make_step(2, 31, {{31, 0.45}, {30, 0.44}});
  RunRecord r = make_run("", DecodeMode::greedy, steps, "identical");
  r.params.replica = k;
  r.params.use_cache = use_cache;
  r.id = run_id(r.experiment, r.prompt_index, r.prompt, r.params);
  return r;
}

SensitivityCell cell(const std::string& name, const std::string& batch, std::vector<RunRecord> runs) {
  return {name, {{"batch", batch}}, EvidenceFile{name + ".json", make_evidence(runs)}};
}

TEST(SensitivityReplicas, DistinctCompletionsPerCellCountTheCopiesOutputs) {
  RunRecord other = make_run("", DecodeMode::greedy, greedy_steps(), "identical");
  other.prompt = "another prompt";  // a run without copies: no group
  other.id = run_id(other.experiment, 0, other.prompt, other.params);
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("alone", "1", {copy(0), copy(1), copy(2), copy(3), other}));
  cells.push_back(cell("batch4", "4-inexact", {copy(0), copy(1, true), copy(2), copy(3, true), other}));
  cells.push_back(cell("partial", "16-inexact", {copy(0, true), copy(2)}));
  // Every copy alike, and every copy unlike the reference: one completion is not "agrees".
  cells.push_back(cell("tiled", "1", {copy(0, true), copy(1, true), copy(2, true), copy(3, true), other}));
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  ASSERT_EQ(m.replica_groups.size(), 1u);
  const ReplicaGroup& g = m.replica_groups[0];
  EXPECT_EQ(g.run, copy(0).id);
  EXPECT_EQ(g.copies, 4u);
  EXPECT_EQ(g.present, (std::vector<std::size_t>{4, 4, 2, 4}));
  EXPECT_EQ(g.distinct, (std::vector<std::size_t>{1, 2, 2, 1}));
  EXPECT_EQ(g.most_common, (std::vector<std::size_t>{4, 2, 1, 4}));
  EXPECT_EQ(g.unlike_reference, (std::vector<std::size_t>{0, 2, 1, 4}));
  EXPECT_EQ(replica_group_cell_text(g, 3), "1 (all 4 of 4; 4 unlike the reference's copy 0)");
  EXPECT_EQ(replica_group_cell_text(g, 0), "1 (all 4 of 4)");
  EXPECT_EQ(replica_group_cell_text(g, 1), "2 (most common: 2 of 4; 2 unlike the reference's copy 0)");
  // The flipped copies are also diverged runs, at new token 3, like any other run.
  EXPECT_EQ(m.runs[1][1].cls, CellClass::diverged);
  EXPECT_EQ(m.runs[1][1].diverged_at, 2);
  const OrderedJson j = sensitivity_to_json(m);
  ASSERT_EQ(j["replica_groups"].size(), 1u);
  EXPECT_EQ(j["replica_groups"][0]["cells"]["batch4"]["distinct_completions"], 2);
  EXPECT_EQ(j["replica_groups"][0]["cells"]["partial"]["copies"], 2);
  const std::string md = sensitivity_markdown(m);
  EXPECT_NE(md.find("## Identical runs, distinct completions"), std::string::npos);
  EXPECT_NE(md.find("| 4 | 1 (all 4 of 4) | 2 (most common: 2 of 4; 2 unlike the reference's copy 0) | 2 (most common: 1 of 2; 1 unlike "
                    "the reference's copy 0) | 1 (all 4 of 4; 4 unlike the reference's copy 0) |"),
            std::string::npos)
      << md;
}

TEST(SensitivityReplicas, RunsThatOnlyShareParametersAreNoGroup) {
  // Two hand-made runs with the same parameters (no copy among them) are not replicas.
  const RunRecord a = make_run("a", DecodeMode::greedy, greedy_steps());
  const RunRecord b = make_run("b", DecodeMode::greedy, greedy_steps());
  const SensitivityMatrix m = build_sensitivity({cell("x", "1", {a, b}), cell("y", "4-inexact", {a, b})}, 0);
  EXPECT_TRUE(m.replica_groups.empty());
  EXPECT_EQ(sensitivity_markdown(m).find("distinct completions"), std::string::npos);
}

TEST(SensitivityCache, AKvCacheCellIsPairedByTheIdWithoutUseCache) {
  const RunRecord recompute = copy(0);
  const RunRecord cached = copy(0, false, true);
  ASSERT_NE(recompute.id, cached.id);
  EXPECT_EQ(id_ignoring_use_cache(cached), recompute.id);
  std::vector<SensitivityCell> cells;
  cells.push_back(cell("as-written", "1", {recompute}));
  SensitivityCell by_id = cell("by-id", "1", {cached});
  SensitivityCell forced = cell("cached", "1", {copy(0, true, true)});
  forced.pair_ignoring_use_cache = true;
  cells.push_back(by_id);
  cells.push_back(forced);
  const SensitivityMatrix m = build_sensitivity(cells, 0);
  ASSERT_EQ(m.run_ids, (std::vector<std::string>{recompute.id}));
  EXPECT_EQ(m.runs[0][1].cls, CellClass::missing);  // paired by id, as every other cell
  EXPECT_EQ(m.runs[0][2].cls, CellClass::diverged);  // paired ignoring use_cache: compared
  EXPECT_EQ(m.runs[0][2].diverged_at, 2);
  const OrderedJson j = sensitivity_to_json(m);
  EXPECT_EQ(j["cells"][1]["paired_by"], "id");
  EXPECT_EQ(j["cells"][2]["paired_by"], "id_ignoring_use_cache");
}

TEST(SensitivityCache, CompareRecognisesACellMadeWithUseCacheForced) {
  const Evidence reference = make_evidence({copy(0), copy(1)});
  EXPECT_TRUE(made_with_use_cache_forced(reference, make_evidence({copy(0, false, true), copy(1, false, true)})));
  // Paired by id already (nothing forced), or mixed use_cache: not the cache axis' cell.
  EXPECT_FALSE(made_with_use_cache_forced(reference, make_evidence({copy(0), copy(1)})));
  EXPECT_FALSE(made_with_use_cache_forced(reference, make_evidence({copy(0, false, true), copy(1)})));
  // A reference that holds both a run and its KV-cache twin cannot be paired ignoring use_cache.
  const Evidence both = make_evidence({copy(0), copy(0, false, true)});
  EXPECT_FALSE(made_with_use_cache_forced(both, make_evidence({copy(0, false, true)})));
}

}  // namespace
}  // namespace genrepro
