// The parity numbers between two engines' runs (compare/engine_parity.hpp), on evidence whose
// differences are planted, so every number has a value known in advance.
#include "compare/engine_parity.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

namespace genrepro {
namespace {

const Evidence& base() {
  static const Evidence e = read_evidence_file(std::string(GENREPRO_SOURCE_DIR) + "/tests/data/frameworks/golden.json").evidence;
  return e;
}

const RunRecord& greedy_of(const Evidence& e) {
  for (const RunRecord& r : e.runs)
    if (r.params.sampling.mode == DecodeMode::greedy) return r;
  throw std::logic_error("no greedy run");
}

TEST(EngineParity, OnlyRunsThatPairAcrossEnginesAreCompared) {
  EXPECT_TRUE(engine_parity(base(), base()).empty()) << "the same engine on both sides is no engine comparison";
  Evidence other = base();
  for (RunRecord& r : other.runs) r.params.engine = Engine::llama_cpp;
  const std::vector<RunParity> runs = engine_parity(base(), other);
  ASSERT_EQ(runs.size(), base().runs.size());
  for (const RunParity& p : runs) {
    EXPECT_TRUE(p.tokens_equal);
    EXPECT_FALSE(p.divergence);
    EXPECT_EQ(p.same_top1, p.comparable_steps);
    EXPECT_EQ(p.max_abs_dlogp, 0.0);
    EXPECT_EQ(p.noise, 0.0);
    EXPECT_EQ(p.engine_a, "genrepro");
    EXPECT_EQ(p.engine_b, "llama.cpp");
  }
}

TEST(EngineParity, ADivergenceIsFoundMeasuredAndJudged) {
  Evidence other = base();
  for (RunRecord& r : other.runs) r.params.engine = Engine::llama_cpp;
  RunRecord& g = const_cast<RunRecord&>(greedy_of(other));
  ASSERT_GE(g.result.steps.size(), 4u);
  // Step 1: the chosen token's probability moves by a known factor; step 3: another token.
  g.result.steps[1].prob *= 0.5;
  g.result.steps[1].top[1].prob_scaled += 0.01;
  g.result.output_ids[3] += 1;
  g.result.steps[3].token_id = g.result.output_ids[3];
  const double margin_b = g.result.steps[3].margin = 0.015;
  const std::vector<RunParity> runs = engine_parity(base(), other);
  const RunParity* p = nullptr;
  for (const RunParity& r : runs)
    if (r.id == g.id) p = &r;
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->tokens_equal);
  ASSERT_TRUE(p->divergence);
  EXPECT_EQ(*p->divergence, 3);
  EXPECT_EQ(p->comparable_steps, 4) << "steps 0..3 have the same input";
  EXPECT_NEAR(p->max_abs_dlogp, std::log(2.0), 1e-12);
  EXPECT_NEAR(p->noise, 0.01, 1e-12);
  ASSERT_TRUE(p->margin_b);
  EXPECT_EQ(*p->margin_b, margin_b);
  EXPECT_TRUE(p->near_tie) << "0.015 <= 2 x 0.01";
  // A wide margin on this side leaves the verdict to the other side's own margin there.
  g.result.steps[3].margin = 0.5;
  const bool golden_near = greedy_of(base()).result.steps[3].margin <= 2 * 0.01;
  for (const RunParity& r : engine_parity(base(), other))
    if (r.id == g.id) EXPECT_EQ(r.near_tie, golden_near);
}

TEST(EngineParity, CsvHasOneRowPerRunAndEmptyCellsForAbsentValues) {
  Evidence other = base();
  for (RunRecord& r : other.runs) r.params.engine = Engine::llama_cpp;
  const std::string csv = parity_csv(engine_parity(base(), other));
  EXPECT_EQ(csv.rfind("run,engine_a,engine_b,tokens_a,tokens_b,tokens_equal,divergence_step,", 0), 0u);
  EXPECT_EQ(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')), base().runs.size() + 1);
  EXPECT_NE(csv.find(",genrepro,llama.cpp,"), std::string::npos);
  EXPECT_NE(csv.find(",true,,"), std::string::npos) << "no divergence: an empty cell";
}

}  // namespace
}  // namespace genrepro
