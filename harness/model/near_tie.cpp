#include "model/near_tie.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "util/splitmix64.hpp"

namespace genrepro {

namespace {

constexpr uint64_t kNearTieSeed = 0x6E656172746965ull;  // the recipe's splitmix64 seed, "neartie" in ASCII

}  // namespace

const std::vector<PlantedPair>& default_near_tie_pairs() {
  static const std::vector<PlantedPair> pairs = {{2413, 50200}, {49167, 50201}, {17875, 50202}};
  return pairs;
}

double exactly_rounded_sum(const std::vector<double>& values) {
  // Shewchuk's partials: after each value they hold the exact running sum as non-overlapping
  // doubles; the last step rounds their sum once, with the half-way correction math.fsum makes.
  std::vector<double> partials;
  for (double x : values) {
    std::size_t i = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  if (partials.empty()) return 0.0;
  std::size_t n = partials.size();
  double hi = partials[--n];
  double lo = 0;
  while (n > 0) {
    const double x = hi;
    const double y = partials[--n];
    hi = x + y;
    const double yr = hi - x;
    lo = y - yr;
    if (lo != 0.0) break;
  }
  // Round half-even across the partials left: the next one says which way the exact sum leans.
  if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
    const double y = lo * 2;
    const double x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

void plant_near_ties(std::vector<float>& wte, int64_t vocab, int64_t width, const std::vector<PlantedPair>& pairs, double eps) {
  SplitMix64 rng(kNearTieSeed);
  const auto w = static_cast<std::size_t>(width);
  for (const PlantedPair& p : pairs) {
    if (p.left < 0 || p.left >= vocab || p.right < 0 || p.right >= vocab || p.left == p.right)
      throw std::invalid_argument("near-tie pair " + std::to_string(p.left) + ":" + std::to_string(p.right) +
                                  ": ids must be distinct and below " + std::to_string(vocab));
    std::vector<double> direction(w), squares(w);
    for (std::size_t k = 0; k < w; ++k) {
      direction[k] = static_cast<double>(rng.next() >> 11) / static_cast<double>(uint64_t{1} << 53) - 0.5;
      squares[k] = direction[k] * direction[k];
    }
    const double length = std::sqrt(exactly_rounded_sum(squares));
    const float* left = &wte[static_cast<std::size_t>(p.left) * w];
    float* right = &wte[static_cast<std::size_t>(p.right) * w];
    for (std::size_t k = 0; k < w; ++k)
      right[k] = static_cast<float>(static_cast<double>(left[k]) + eps * direction[k] / length);
  }
}

}  // namespace genrepro
