#pragma once
// The near-tie fixture (docs/sensitivity.md, "A fixture that can diverge"): the tiny
// fixture with planted near-ties. For each pair A:X, token X's row of wte (GPT-2 ties the output
// layer to it) becomes A's row plus eps times a unit direction drawn with splitmix64, computed in
// double and rounded once to float32, so X sits within float32 noise of A whenever A leads and
// which of the two wins depends on how the kernel rounds two dot products. The same arithmetic as
// scripts/near_tie_fixture.py (the recipe, for other pairs), bit for bit: no libm beyond sqrt,
// which IEEE 754 rounds correctly, and an exactly rounded sum.
#include <cstdint>
#include <vector>

namespace genrepro {

struct PlantedPair {
  int64_t left = 0;   // A: the token whose row is copied
  int64_t right = 0;  // X: the row that becomes A's, nudged
};

// The tiny fixture's greedy picks at new tokens 1, 4 and 8 of "the river bank was" (2413, 49167,
// 17875) beside ids 50200-50202; eps 1e-7.
const std::vector<PlantedPair>& default_near_tie_pairs();
inline constexpr double kNearTieEps = 1e-7;

// Plants the pairs, in order, into a [vocab, width] row-major wte.
void plant_near_ties(std::vector<float>& wte, int64_t vocab, int64_t width, const std::vector<PlantedPair>& pairs, double eps);

// The correctly rounded sum of `values` (Shewchuk's algorithm, as Python's math.fsum).
double exactly_rounded_sum(const std::vector<double>& values);

}  // namespace genrepro
