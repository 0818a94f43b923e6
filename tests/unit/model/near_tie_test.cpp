// The near-tie preset (model/near_tie.hpp): its exact sum against Python's math.fsum on the
// documentation's own examples, and the planted rows against the tiny fixture's: only the planted
// rows change, each within float32 noise of its partner. (tests/cli/near_tie_preset.py checks the
// whole file against scripts/near_tie_fixture.py, the independent recipe.)
#include "model/near_tie.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "model/fixture_model.hpp"

namespace genrepro {
namespace {

TEST(NearTie, ExactSumIsPythonsFsum) {
  // math.fsum's values, printed by /usr/bin/python3 (repr).
  EXPECT_EQ(exactly_rounded_sum({1e-16, 1, 1e16}), 1.0000000000000002e16);
  EXPECT_EQ(exactly_rounded_sum(std::vector<double>(10, 0.1)), 1.0);  // the naive sum is 0.9999999999999999
  EXPECT_EQ(exactly_rounded_sum({1e100, 1.0, -1e100, 1e-100, 1e50, -1.0, -1e50}), 1e-100);
  EXPECT_EQ(exactly_rounded_sum({}), 0.0);
}

SafetensorsEntry wte_entry() {
  for (const SafetensorsEntry& e : fixture_tensor_entries(FixturePreset::near_tie))
    if (e.name == "wte.weight") return e;
  ADD_FAILURE() << "no wte.weight";
  return {};
}

TEST(NearTie, OnlyThePlantedRowsChangeEachANudgedCopyOfItsPartner) {
  const SafetensorsEntry wte = wte_entry();
  const std::vector<float> tiny = fixture_tensor_values(FixturePreset::tiny, wte);
  const std::vector<float> near = fixture_tensor_values(FixturePreset::near_tie, wte);
  const auto width = static_cast<std::size_t>(wte.shape[1]);
  std::set<int64_t> rights;
  for (const PlantedPair& p : default_near_tie_pairs()) rights.insert(p.right);
  std::size_t changed_rows = 0;
  for (int64_t row = 0; row < wte.shape[0]; ++row) {
    bool changed = false;
    for (std::size_t k = 0; k < width; ++k) changed = changed || tiny[row * width + k] != near[row * width + k];
    changed_rows += changed;
    if (changed) EXPECT_TRUE(rights.count(row)) << "row " << row << " changed";
  }
  EXPECT_EQ(changed_rows, rights.size());
  for (const PlantedPair& p : default_near_tie_pairs()) {
    double distance2 = 0;
    for (std::size_t k = 0; k < width; ++k) {
      const double d = double(near[p.right * width + k]) - double(near[p.left * width + k]);
      distance2 += d * d;
    }
    // |X - A| is eps (1e-7) up to the float32 rounding of each entry (|entry| < 1.75, ulp/2 < 6e-8).
    EXPECT_GT(std::sqrt(distance2), 0.0) << p.left << ":" << p.right;
    EXPECT_LT(std::sqrt(distance2), kNearTieEps + 6e-8 * std::sqrt(double(width))) << p.left << ":" << p.right;
  }
}

TEST(NearTie, APairOutsideTheVocabularyIsRefused) {
  std::vector<float> wte(4 * 2, 0.0f);
  EXPECT_THROW(plant_near_ties(wte, 4, 2, {{1, 4}}, kNearTieEps), std::invalid_argument);
  EXPECT_THROW(plant_near_ties(wte, 4, 2, {{2, 2}}, kNearTieEps), std::invalid_argument);
}

}  // namespace
}  // namespace genrepro
